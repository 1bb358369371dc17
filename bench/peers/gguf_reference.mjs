// The reference for baton's GGUF reader (tests/model/gguf_file_test.cpp): node-llama-cpp's
// GGUF parser (readGgufFileInfo, the one llama.cpp's Node binding loads models with) on a
// GGUF file, printed as {version, metadata: {dotted key: value}, tensors: [{name, dims,
// type, file_offset}]}.
//   bench/peers/setup && node bench/peers/gguf_reference.mjs FILE.gguf > reference.json
import { readGgufFileInfo } from 'node-llama-cpp';

const info = await readGgufFileInfo(process.argv[2], { readTensorInfo: true });

// node-llama-cpp nests the keys ("general.alignment" is general -> alignment).
function flatten(object, prefix, out) {
  for (const [key, value] of Object.entries(object)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      flatten(value, name, out);
    } else {
      out[name] = value;
    }
  }
  return out;
}

const asNumber = (key, value) => (typeof value === 'bigint' ? Number(value) : value);
process.stdout.write(JSON.stringify({
  version: info.version,
  metadata: flatten(info.metadata, '', {}),
  tensors: info.fullTensorInfo.map((t) => ({
    name: t.name, dims: t.dimensions.map(Number), type: t.ggmlType, file_offset: Number(t.fileOffset),
  })),
}, asNumber, 1) + '\n');
