// The wire format of components/binary_payload.py, browser side (the inverse of its `pack`):
// [u32 little-endian header length][header JSON, UTF-8][blobs, each at a 4-byte aligned offset].
// header.blobs maps a name to [offset, length, dtype] with offsets from the start of the message.
// Pure: no DOM.

export function unpack(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + headerLength)));
  const blobs = {};
  for (const [name, [offset, length, dtype]] of Object.entries(header.blobs || {})) {
    const copy = bytes.slice(offset, offset + length); // own, aligned buffer
    blobs[name] = dtype === "float32" ? new Float32Array(copy.buffer) : copy;
  }
  return { header, blobs };
}
