// Protobuf-ES encodes strings with Node's Buffer instead of TextEncoder: same bytes, a tenth of the time.
import { configureTextEncoding, getTextEncoding } from "@bufbuild/protobuf/wire";

/**
 * Every string field of every binary message (gRPC, Connect proto) passes through `encodeUtf8`. Node 20's
 * TextEncoder.encode allocates a fresh ArrayBuffer through C++ for each call: about 0.7 µs for a short string,
 * 12 µs for the 17 strings of a GetUser answer. Buffer.from takes short strings from its pool (~0.09 µs).
 * Both write the same UTF-8 and turn a lone surrogate into U+FFFD. Decoding is left as it was.
 */
export function useBufferTextEncoding(): void {
  const standard = getTextEncoding();
  configureTextEncoding({
    encodeUtf8: (text: string) => Buffer.from(text, "utf8"),
    decodeUtf8: (bytes: Uint8Array, strict?: boolean) => standard.decodeUtf8(bytes, strict),
    checkUtf8: (text: string) => standard.checkUtf8(text),
  });
}
