// Shared by bench/ort_latency.js and bench/ort_sessions.js: the onnxruntime-node package and the
// deterministic inputs both feed to a model.
// ORT_NODE may point at the onnxruntime-node package (default: require('onnxruntime-node')).
const ort = require(process.env.ORT_NODE || 'onnxruntime-node');

// Inputs from specs 'name:1x3x224x224[:int64]': floats sin(i)/2, or int64 i % 8.
function makeFeeds(specs) {
  const feeds = {};
  for (const sp of specs) {
    const [name, shp, ty] = sp.split(':');
    const dims = shp.split('x').map(Number);
    const count = dims.reduce((a, b) => a * b, 1);
    if (ty === 'int64') feeds[name] = new ort.Tensor('int64', BigInt64Array.from({ length: count }, (_, i) => BigInt(i % 8)), dims);
    else feeds[name] = new ort.Tensor('float32', Float32Array.from({ length: count }, (_, i) => Math.sin(i) * 0.5), dims);
  }
  return feeds;
}

module.exports = { ort, makeFeeds };
