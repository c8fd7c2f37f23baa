// Standard gRPC server reflection (grpc.reflection.v1 and v1alpha ServerReflectionInfo) implemented as Connect services.
import { create, fromBinary, toBinary, type DescFile, type MessageInitShape } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectRouter } from "@connectrpc/connect";
import { file_grpc_health_v1_health } from "../../../gen/grpc/health/v1/health_pb.js";
import * as v1 from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { KEYLESS_READ_MAX_BYTES } from "../transport/services.js";

/** Everything reflection needs to know, computed once at registration. */
interface ReflectionIndex {
  /** Fully-qualified names of the services list_services reports, sorted. */
  readonly services: readonly string[];
  /** Every known file (the given ones, the standard services' ones, and all transitive imports) by file name. */
  readonly filesByName: ReadonlyMap<string, DescFile>;
  /** Fully-qualified symbol (message, enum, enum value, field, oneof, service, method, extension) → declaring file. */
  readonly fileBySymbol: ReadonlyMap<string, DescFile>;
  /** "<extendee type>#<field number>" → file declaring that extension. */
  readonly fileByExtension: ReadonlyMap<string, DescFile>;
  /** Message type name → numbers of all known extensions of it (empty array for known messages without extensions). */
  readonly extensionNumbers: ReadonlyMap<string, readonly number[]>;
  /** Serialized FileDescriptorProto per file name, filled lazily. */
  readonly serialized: Map<string, Uint8Array>;
}

/**
 * Registers grpc.reflection.v1.ServerReflection and grpc.reflection.v1alpha.ServerReflection on the router.
 *
 * `files` are the files whose services the router serves (e.g. the six scheduling.v1 files);
 * grpc.health.v1 and the reflection files themselves are always added.
 */
export function registerReflection(router: ConnectRouter, files: DescFile[]): void {
  const index = buildIndex([
    ...files,
    file_grpc_health_v1_health,
    v1.file_grpc_reflection_v1_reflection,
    v1alpha.file_grpc_reflection_v1alpha_reflection,
  ]);

  // Anyone may call it: its messages are held to the keyless limit, as the public booking service's are.
  router.service(v1.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        yield answer(index, request);
      }
    },
  }, { readMaxBytes: KEYLESS_READ_MAX_BYTES });

  // v1alpha is wire-identical to v1: translate through the binary encoding and reuse the v1 logic.
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        const asV1 = fromBinary(
          v1.ServerReflectionRequestSchema,
          toBinary(v1alpha.ServerReflectionRequestSchema, request),
        );
        yield fromBinary(
          v1alpha.ServerReflectionResponseSchema,
          toBinary(v1.ServerReflectionResponseSchema, answer(index, asV1)),
        );
      }
    },
  }, { readMaxBytes: KEYLESS_READ_MAX_BYTES });
}

function buildIndex(roots: readonly DescFile[]): ReflectionIndex {
  const filesByName = new Map<string, DescFile>();
  const visit = (file: DescFile): void => {
    if (filesByName.has(file.proto.name)) return;
    filesByName.set(file.proto.name, file);
    file.dependencies.forEach(visit);
  };
  roots.forEach(visit);

  const services = new Set<string>();
  for (const file of roots) for (const service of file.services) services.add(service.typeName);

  const fileBySymbol = new Map<string, DescFile>();
  const fileByExtension = new Map<string, DescFile>();
  const extensionNumbers = new Map<string, number[]>();
  for (const file of filesByName.values()) {
    const add = (symbol: string): void => {
      if (!fileBySymbol.has(symbol)) fileBySymbol.set(symbol, file);
    };
    for (const desc of nestedTypes(file)) {
      add(desc.typeName);
      switch (desc.kind) {
        case "message":
          if (!extensionNumbers.has(desc.typeName)) extensionNumbers.set(desc.typeName, []);
          for (const field of desc.fields) add(`${desc.typeName}.${field.name}`);
          for (const oneof of desc.oneofs) add(`${desc.typeName}.${oneof.name}`);
          break;
        case "enum": {
          // Enum values live in the enum's enclosing scope (C++ scoping rules).
          const scope = desc.parent?.typeName ?? file.proto.package;
          for (const value of desc.values) add(scope === "" ? value.name : `${scope}.${value.name}`);
          break;
        }
        case "service":
          for (const method of desc.methods) add(`${desc.typeName}.${method.name}`);
          break;
        case "extension": {
          const extendee = desc.extendee.typeName;
          fileByExtension.set(`${extendee}#${desc.number}`, file);
          const numbers = extensionNumbers.get(extendee) ?? [];
          numbers.push(desc.number);
          extensionNumbers.set(extendee, numbers);
          break;
        }
      }
    }
  }

  return {
    services: [...services].sort(),
    filesByName,
    fileBySymbol,
    fileByExtension,
    extensionNumbers,
    serialized: new Map(),
  };
}

function answer(index: ReflectionIndex, request: v1.ServerReflectionRequest): v1.ServerReflectionResponse {
  const respond = (
    messageResponse: MessageInitShape<typeof v1.ServerReflectionResponseSchema>["messageResponse"],
  ): v1.ServerReflectionResponse =>
    create(v1.ServerReflectionResponseSchema, {
      validHost: request.host,
      originalRequest: request,
      messageResponse,
    });
  const notFound = (what: string): v1.ServerReflectionResponse =>
    respond({ case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: `${what} not found` } });
  const files = (file: DescFile | undefined, what: string): v1.ServerReflectionResponse =>
    file === undefined
      ? notFound(what)
      : respond({ case: "fileDescriptorResponse", value: { fileDescriptorProto: withDependencies(index, file) } });

  const req = request.messageRequest;
  switch (req.case) {
    case "listServices":
      return respond({
        case: "listServicesResponse",
        value: { service: index.services.map((name) => ({ name })) },
      });
    case "fileByFilename":
      return files(index.filesByName.get(req.value), `file ${JSON.stringify(req.value)}`);
    case "fileContainingSymbol":
      return files(index.fileBySymbol.get(req.value), `symbol ${JSON.stringify(req.value)}`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = req.value;
      return files(
        index.fileByExtension.get(`${containingType}#${extensionNumber}`),
        `extension ${extensionNumber} of ${JSON.stringify(containingType)}`,
      );
    }
    case "allExtensionNumbersOfType": {
      const numbers = index.extensionNumbers.get(req.value);
      if (numbers === undefined) return notFound(`message type ${JSON.stringify(req.value)}`);
      return respond({
        case: "allExtensionNumbersResponse",
        value: { baseTypeName: req.value, extensionNumber: [...numbers] },
      });
    }
    case undefined:
      return respond({
        case: "errorResponse",
        value: { errorCode: Code.InvalidArgument, errorMessage: "message_request not set" },
      });
  }
}

/** Serialized descriptors of `file` followed by all its transitive imports, each exactly once. */
function withDependencies(index: ReflectionIndex, file: DescFile): Uint8Array[] {
  const seen = new Set<string>();
  const out: Uint8Array[] = [];
  const visit = (f: DescFile): void => {
    const name = f.proto.name;
    if (seen.has(name)) return;
    seen.add(name);
    let bytes = index.serialized.get(name);
    if (bytes === undefined) {
      bytes = toBinary(FileDescriptorProtoSchema, f.proto);
      index.serialized.set(name, bytes);
    }
    out.push(bytes);
    f.dependencies.forEach(visit);
  };
  visit(file);
  return out;
}
