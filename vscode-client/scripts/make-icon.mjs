// Draws the extension icon (a white nabla on a PyTorch-orange rounded square) as a 128x128 PNG.
// Usage: node scripts/make-icon.mjs images/icon.png
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const SIZE = 128;
const SUBSAMPLES = 4; // per axis: anti-aliased edges without a graphics library
const BACKGROUND = [238, 76, 44];
const FOREGROUND = [255, 255, 255];

function insideRoundedSquare(x, y) {
    const radius = 24;
    const cx = Math.min(Math.max(x, radius), SIZE - radius);
    const cy = Math.min(Math.max(y, radius), SIZE - radius);
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
}

/** Inside the downward triangle whose top edge spans 2*halfWidth at y=top and whose tip is at y=bottom? */
function insideTriangle(x, y, top, bottom, halfWidth) {
    if (y < top || y > bottom) {
        return false;
    }
    const half = (halfWidth * (bottom - y)) / (bottom - top);
    return Math.abs(x - SIZE / 2) <= half;
}

function insideNabla(x, y) {
    const outer = insideTriangle(x, y, 30, 102, 44);
    const inner = insideTriangle(x, y, 43, 81, 23);
    return outer && !inner;
}

function pixel(px, py) {
    let background = 0;
    let foreground = 0;
    for (let sy = 0; sy < SUBSAMPLES; sy++) {
        for (let sx = 0; sx < SUBSAMPLES; sx++) {
            const x = px + (sx + 0.5) / SUBSAMPLES;
            const y = py + (sy + 0.5) / SUBSAMPLES;
            if (insideRoundedSquare(x, y)) {
                if (insideNabla(x, y)) {
                    foreground++;
                } else {
                    background++;
                }
            }
        }
    }
    const covered = background + foreground;
    if (covered === 0) {
        return [0, 0, 0, 0];
    }
    const mix = (channel) => Math.round((BACKGROUND[channel] * background + FOREGROUND[channel] * foreground) / covered);
    return [mix(0), mix(1), mix(2), Math.round((255 * covered) / SUBSAMPLES ** 2)];
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) {
        c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    }
    return c >>> 0;
});

function crc32(buffer) {
    let crc = 0xffffffff;
    for (const byte of buffer) {
        crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
    }
    return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
}

const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header[8] = 8; // bits per channel
header[9] = 6; // RGBA
const rows = [];
for (let y = 0; y < SIZE; y++) {
    const row = [0]; // filter: none
    for (let x = 0; x < SIZE; x++) {
        row.push(...pixel(x, y));
    }
    rows.push(Buffer.from(row));
}
const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
]);
writeFileSync(process.argv[2] ?? 'images/icon.png', png);
