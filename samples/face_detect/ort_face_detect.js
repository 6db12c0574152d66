// The reference face-detection pipeline: ONNX Runtime (npm onnxruntime-node, CPU) with the same
// pre- and post-processing as samples/face_detect, written here again from their definitions
// (nothing shared with the C++ code, so a mistake on either side shows as a disagreement).
//
//   node ort_face_detect.js MODEL.onnx IMAGE.png OUT.json
//
// Preprocessing: letterbox to 128x128 (scale min(128 / w, 128 / h), the other side rounded, the
// image centred, black borders), bilinear with half-pixel centres clamped at the edges, RGB
// scaled to [-1, 1], NHWC float32. Postprocessing: MediaPipe's BlazeFace front decoding (896
// anchors, sigmoid of the clipped logit >= 0.75), weighted NMS (IoU > 0.3), boxes and key points
// mapped back to image pixels. OUT.json: {"image": {...}, "faces": [{"box": [x0, y0, x1, y1],
// "score": s, "keypoints": [[x, y] x 6]}, ...]}, best first. NODE_PATH must reach
// onnxruntime-node (tests/networks/prepare.py installs it under the build directory).
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const ort = require('onnxruntime-node');

const SIZE = 128;
const MIN_SCORE = 0.75;
const IOU_THRESHOLD = 0.3;

function fail(message) {
  console.error('ort_face_detect: ' + message);
  process.exit(1);
}

// An 8-bit, non-interlaced PNG (grey, RGB or RGBA) as { width, height, rgb: Uint8Array }.
function readPng(file) {
  const bytes = fs.readFileSync(file);
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length < 8 || signature.some((b, i) => bytes[i] !== b)) fail(file + ': not a PNG file');
  let at = 8, width = 0, height = 0, depth = 0, colour = 0, interlace = 0;
  const idat = [];
  while (at + 8 <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      depth = data[8];
      colour = data[9];
      interlace = data[12];
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      break;
    }
    at += 12 + length;
  }
  const channels = { 0: 1, 2: 3, 6: 4 }[colour];
  if (depth !== 8 || !channels || interlace !== 0) {
    fail(file + ': only 8-bit non-interlaced grey, RGB or RGBA PNGs are read here');
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  if (raw.length !== height * (stride + 1)) fail(file + ': truncated image data');
  const pixels = new Uint8Array(height * stride);
  // Undo the per-row filters (PNG spec, section 9).
  for (let y = 0; y < height; ++y) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    for (let x = 0; x < stride; ++x) {
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      let predictor;
      if (filter === 0) predictor = 0;
      else if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
      } else fail(file + ': bad PNG filter ' + filter);
      pixels[y * stride + x] = (raw[src + x] + predictor) & 255;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; ++i) {
    for (let k = 0; k < 3; ++k) rgb[3 * i + k] = pixels[channels * i + (channels === 1 ? 0 : k)];
  }
  return { width, height, rgb };
}

// The letterboxed, normalized NHWC input and where the image landed.
function preprocess(image) {
  const { width, height, rgb } = image;
  const scale = Math.min(SIZE / width, SIZE / height);
  const rw = scale === SIZE / width ? SIZE : Math.min(SIZE, Math.max(1, Math.round(width * scale)));
  const rh = scale === SIZE / height ? SIZE : Math.min(SIZE, Math.max(1, Math.round(height * scale)));
  const px = Math.floor((SIZE - rw) / 2), py = Math.floor((SIZE - rh) / 2);
  const input = new Float32Array(SIZE * SIZE * 3);
  const pixel = (x, y, c) => rgb[(y * width + x) * 3 + c];
  for (let oy = 0; oy < SIZE; ++oy) {
    for (let ox = 0; ox < SIZE; ++ox) {
      const u = ox - px, v = oy - py;
      for (let c = 0; c < 3; ++c) {
        let value = 0;  // black border
        if (u >= 0 && u < rw && v >= 0 && v < rh) {
          const sx = Math.min(Math.max((u + 0.5) * width / rw - 0.5, 0), width - 1);
          const sy = Math.min(Math.max((v + 0.5) * height / rh - 0.5, 0), height - 1);
          const x0 = Math.floor(sx), y0 = Math.floor(sy);
          const x1 = Math.min(x0 + 1, width - 1), y1 = Math.min(y0 + 1, height - 1);
          const wx = sx - x0, wy = sy - y0;
          value = (1 - wy) * ((1 - wx) * pixel(x0, y0, c) + wx * pixel(x1, y0, c)) +
                  wy * ((1 - wx) * pixel(x0, y1, c) + wx * pixel(x1, y1, c));
        }
        input[(oy * SIZE + ox) * 3 + c] = value * 2 / 255 - 1;
      }
    }
  }
  return { input, scaleX: rw / width, scaleY: rh / height, padX: px, padY: py };
}

function iou(a, b) {
  const areaA = (a.box[2] - a.box[0]) * (a.box[3] - a.box[1]);
  const areaB = (b.box[2] - b.box[0]) * (b.box[3] - b.box[1]);
  if (!(areaA > 0) || !(areaB > 0)) return 0;
  const w = Math.min(a.box[2], b.box[2]) - Math.max(a.box[0], b.box[0]);
  const h = Math.min(a.box[3], b.box[3]) - Math.max(a.box[1], b.box[1]);
  if (w <= 0 || h <= 0) return 0;
  return w * h / (areaA + areaB - w * h);
}

// outputs: [scores, boxes] of the stride-8 layer (16x16 cells x 2) and the stride-16 layer
// (8x8 x 6), found by size. Returns the detections in normalized input coordinates.
function decode(layers) {
  const found = [];
  let anchor = 0;
  for (const { cells, perCell, scores, boxes } of layers) {
    for (let y = 0; y < cells; ++y) {
      for (let x = 0; x < cells; ++x) {
        for (let a = 0; a < perCell; ++a, ++anchor) {
          const i = (y * cells + x) * perCell + a;
          const logit = Math.min(100, Math.max(-100, scores[i]));
          const score = 1 / (1 + Math.exp(-logit));
          if (!(score >= MIN_SCORE)) continue;
          const r = boxes.subarray(i * 16, i * 16 + 16);
          const ax = (x + 0.5) / cells, ay = (y + 0.5) / cells;
          const cx = ax + r[0] / SIZE, cy = ay + r[1] / SIZE, w = r[2] / SIZE, h = r[3] / SIZE;
          const keypoints = [];
          for (let k = 0; k < 6; ++k) keypoints.push([ax + r[4 + 2 * k] / SIZE, ay + r[5 + 2 * k] / SIZE]);
          found.push({ box: [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], score, keypoints, anchor });
        }
      }
    }
  }
  return found;
}

// MediaPipe's weighted NMS: the best remaining detection and every one overlapping it by
// IoU > 0.3 are averaged, weighted by score; the best score is kept.
function weightedNms(detections) {
  let remaining = detections.slice().sort((a, b) => (b.score - a.score) || (a.anchor - b.anchor));
  const out = [];
  while (remaining.length > 0) {
    const best = remaining[0];
    const group = [], rest = [];
    remaining.forEach((d, i) => (i === 0 || iou(best, d) > IOU_THRESHOLD ? group : rest).push(d));
    const total = group.reduce((s, d) => s + d.score, 0);
    const avg = (f) => group.reduce((s, d) => s + d.score * f(d), 0) / total;
    out.push({
      box: [0, 1, 2, 3].map((k) => avg((d) => d.box[k])),
      score: best.score,
      keypoints: best.keypoints.map((_, k) => [avg((d) => d.keypoints[k][0]), avg((d) => d.keypoints[k][1])]),
    });
    remaining = rest;
  }
  return out;
}

async function main() {
  const [model, imageFile, outFile] = process.argv.slice(2);
  if (!outFile) fail('usage: node ort_face_detect.js MODEL.onnx IMAGE.png OUT.json');
  const image = readPng(imageFile);
  const pre = preprocess(image);
  // All optimizations off: the reference is the graph as written, node by node.
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled' });
  const feeds = {};
  feeds[session.inputNames[0]] = new ort.Tensor('float32', pre.input, [1, SIZE, SIZE, 3]);
  const out = await session.run(feeds);
  const bySize = {};
  for (const name of session.outputNames) bySize[out[name].data.length] = out[name].data;
  for (const n of [512, 384, 512 * 16, 384 * 16]) {
    if (!bySize[n]) fail(model + ': no output with ' + n + ' values (not BlazeFace front?)');
  }
  const layers = [{ cells: 16, perCell: 2, scores: bySize[512], boxes: bySize[512 * 16] },
                  { cells: 8, perCell: 6, scores: bySize[384], boxes: bySize[384 * 16] }];
  const toX = (v) => (v * SIZE - pre.padX) / pre.scaleX;
  const toY = (v) => (v * SIZE - pre.padY) / pre.scaleY;
  const faces = weightedNms(decode(layers)).map((f) => ({
    box: [toX(f.box[0]), toY(f.box[1]), toX(f.box[2]), toY(f.box[3])],
    score: f.score,
    keypoints: f.keypoints.map(([x, y]) => [toX(x), toY(y)]),
  }));
  const result = { image: { file: imageFile, width: image.width, height: image.height }, faces };
  fs.writeFileSync(outFile, JSON.stringify(result, null, 1) + '\n');
  for (const f of faces) {
    console.log('ort_face_detect: face box [' + f.box.map((v) => v.toFixed(1)).join(', ') +
                '], score ' + f.score.toFixed(4));
  }
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
