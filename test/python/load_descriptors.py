"""Loads a descriptor set of proto/ (buf build --as-file-descriptor-set) into a new pool of this interpreter's protobuf, as any Python program built from those protos would; upb refuses a file whose names clash (a JSON name equal to another field's or oneof's name).

Usage: load_descriptors.py <set.binpb>   Prints `descriptors <protobuf version> <files> <messages>`; fails with
protobuf's own error otherwise.
"""
import sys

import google.protobuf
from google.protobuf import descriptor_pb2, descriptor_pool


def main():
    with open(sys.argv[1], "rb") as f:
        files = descriptor_pb2.FileDescriptorSet.FromString(f.read()).file
    pool = descriptor_pool.DescriptorPool()
    for file in files:  # in dependency order, as buf writes them
        pool.Add(file)
    messages = sum(len(pool.FindFileByName(file.name).message_types_by_name) for file in files)
    print(f"descriptors {google.protobuf.__version__} {len(files)} {messages}")


if __name__ == "__main__":
    main()
