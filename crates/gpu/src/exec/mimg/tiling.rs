//! GFX9 swizzle modes of 2D images (`SW_MODE` of the T#): where texel
//! (x, y, slice) of a single-level surface lies, as AMD's address library
//! (addrlib, `Gfx9Lib`) lays it out for the `GB_ADDR_CONFIG` the driver
//! reports ([`GB_ADDR_CONFIG`]).
//!
//! A tiled surface is a grid of blocks (256 B, 4 KiB or 64 KiB) whose
//! dimensions in elements are the 256-byte micro block's (16x16 for 1-byte
//! elements, 16x8, 8x8, 8x4, 4x4 for 16-byte ones) doubled alternately in
//! width and height; blocks follow each other along the row pitch (the T#
//! `PITCH`, in elements), rows of blocks along the height padded to the
//! block height, slices after that. Inside a block:
//! * Z (depth order): a Morton interleave of the element's x and y bits.
//! * S (standard), D (display), R (rotated): the micro block's bit pattern
//!   of each type and element size, then a Morton interleave (y first) of
//!   the micro block's coordinates.
//! * The `_X` and `_T` variants then XOR the pipe bits (above the 256-byte
//!   pipe interleave) and bank bits with the higher bits of the offset, bit
//!   reversed, and the `_X` ones also with the slice index, bit reversed.

use super::desc::sw_mode_name;
use crate::exec::op::Fault;

/// `GB_ADDR_CONFIG` of the emulated GFX9 GPUs (what the driver answers to
/// `AMDKFD_IOC_GET_TILE_CONFIG` and `AMDGPU_INFO_READ_MMR_REG`): 4 pipes,
/// 256-byte pipe interleave, 16 banks, 4 shader engines.
pub const GB_ADDR_CONFIG: u32 = 0x2a11_4042;

/// The address library's parameters derived from `GB_ADDR_CONFIG`.
#[derive(Copy, Clone, Debug)]
struct Config {
    pipes_log2: u32,
    interleave_log2: u32,
    banks_log2: u32,
    se_log2: u32,
}

impl Config {
    const fn of(gb: u32) -> Config {
        Config {
            pipes_log2: gb & 7,
            interleave_log2: 8 + ((gb >> 3) & 7),
            banks_log2: (gb >> 12) & 7,
            se_log2: (gb >> 19) & 3,
        }
    }

    fn pipe_bits(&self, blk_log2: u32) -> u32 {
        (blk_log2 - self.interleave_log2).min(self.pipes_log2 + self.se_log2)
    }

    fn bank_bits(&self, blk_log2: u32) -> u32 {
        (blk_log2 - self.pipe_bits(blk_log2) - self.interleave_log2).min(self.banks_log2)
    }
}

/// A swizzle mode's addressing of one surface.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tiling {
    mode: u32,
    blk_log2: u32,
    elem_log2: u32,
    /// Block dimensions in elements.
    blk_w: u32,
    blk_h: u32,
    /// Blocks per row and per slice.
    pitch_blocks: u64,
    slice_blocks: u64,
}

/// Micro block (256 B) dimensions by log2 of the element size.
const MICRO: [(u32, u32); 5] = [(16, 16), (16, 8), (8, 8), (8, 4), (4, 4)];

impl Tiling {
    /// The tiling of a 2D surface (or array) of `bytes`-byte elements,
    /// `pitch` elements per row and `height` rows, in swizzle mode `mode`.
    pub fn new(mode: u32, bytes: u32, pitch: u32, height: u32) -> Result<Tiling, Fault> {
        let unsupported = |why: &str| {
            Fault::Invalid(format!(
                "image with swizzle mode {} (SW_MODE {mode}): {why}",
                sw_mode_name(mode)
            ))
        };
        let blk_log2 = match mode {
            1..=3 => 8,
            4..=7 | 20..=23 => 12,
            8..=11 | 16..=19 | 24..=27 => 16,
            _ => {
                return Err(unsupported(
                    "variable-size blocks are not a GFX9 layout the emulator addresses",
                ));
            }
        };
        if !bytes.is_power_of_two() || bytes > 16 {
            return Err(unsupported(&format!("{bytes}-byte elements are not tiled")));
        }
        let elem_log2 = bytes.trailing_zeros();
        if mode & 3 == 0 && !(elem_log2 <= 3 || blk_log2 > 8) {
            return Err(unsupported(
                "Z order of 16-byte elements in 256-byte blocks",
            ));
        }
        let (mw, mh) = MICRO[elem_log2 as usize];
        let amp = blk_log2 - 8;
        let (blk_w, blk_h) = (mw << (amp / 2), mh << (amp - amp / 2));
        let pitch_blocks = u64::from(pitch.div_ceil(blk_w));
        let height_blocks = u64::from(height.div_ceil(blk_h));
        Ok(Tiling {
            mode,
            blk_log2,
            elem_log2,
            blk_w,
            blk_h,
            pitch_blocks,
            slice_blocks: pitch_blocks * height_blocks,
        })
    }

    fn is_xor(&self) -> bool {
        self.mode >= 16
    }

    fn is_prt(&self) -> bool {
        (16..20).contains(&self.mode)
    }

    /// The byte offset of element (x, y) of slice `z` from the surface's
    /// base.
    pub fn offset(&self, x: u32, y: u32, z: u32) -> u64 {
        let cfg = Config::of(GB_ADDR_CONFIG);
        let e = self.elem_log2;
        let kind = self.mode & 3;
        let mut off: u64 = if kind == 0 {
            let o = if e == 0 || e == 2 {
                let low_bits = 6 - e;
                let mort = low_bits / 2;
                u64::from(morton(y, x, mort))
                    | (u64::from(morton(x >> mort, y >> mort, 9)) << low_bits)
            } else {
                u64::from(morton(y, x, 13))
            };
            o << e
        } else {
            let (mw, mh) = MICRO[e as usize];
            u64::from(micro(kind, e, x, y)) | (u64::from(morton(x / mw, y / mh, 12)) << 8)
        };
        let mut pipe_bits = 0;
        let mut bank_bits = 0;
        if self.is_xor() {
            if self.is_prt() {
                off &= (1 << self.blk_log2) - 1;
            }
            let il = cfg.interleave_log2;
            let inter = off & ((1 << il) - 1);
            let mut rest = off >> il;
            pipe_bits = cfg.pipe_bits(self.blk_log2);
            let pipe_xor = fold_xor(rest, pipe_bits);
            rest >>= pipe_bits;
            bank_bits = cfg.bank_bits(self.blk_log2);
            let bank_xor = fold_xor(rest, bank_bits);
            rest >>= bank_bits;
            off = ((((rest << bank_bits) | bank_xor) << pipe_bits | pipe_xor) << il) | inter;
            if !self.is_prt() {
                off ^= u64::from(reverse(z, pipe_bits)) << il;
                off ^= u64::from(reverse(z >> pipe_bits, bank_bits)) << (il + pipe_bits);
            }
        }
        let _ = (pipe_bits, bank_bits);
        off &= (1 << self.blk_log2) - 1;
        let block = u64::from(z) * self.slice_blocks
            + u64::from(y / self.blk_h) * self.pitch_blocks
            + u64::from(x / self.blk_w);
        off | (block << self.blk_log2)
    }
}

/// Interleaves the low `n` bits of `a` and `b`, `b`'s bit first.
fn morton(a: u32, b: u32, n: u32) -> u32 {
    let mut m = 0;
    for i in 0..n {
        m |= ((b >> i) & 1) << (2 * i);
        m |= ((a >> i) & 1) << (2 * i + 1);
    }
    m
}

/// The low `n` bits of `v` in reverse order.
fn reverse(v: u32, n: u32) -> u32 {
    (0..n).fold(0, |r, i| r | (((v >> (n - 1 - i)) & 1) << i))
}

/// The low `n` bits of `v` XORed with the next `n`, reversed.
fn fold_xor(v: u64, n: u32) -> u64 {
    (v & ((1 << n) - 1)) ^ u64::from(reverse((v >> n) as u32, n))
}

/// `n` bits of `v` from bit `src`, placed at bit `dst`.
fn bits(v: u32, src: u32, n: u32, dst: u32) -> u32 {
    ((v >> src) & ((1 << n) - 1)) << dst
}

/// The byte offset inside a 256-byte micro block of an S (1), D (2) or R
/// (3) swizzle, for elements of `1 << e` bytes.
fn micro(kind: u32, e: u32, x: u32, y: u32) -> u32 {
    match kind {
        1 => {
            let xb = x << e;
            let mut o = (xb & 0xf) | ((y & 3) << 4);
            if e < 3 {
                o |= (y & 4) << 4;
                o |= if e == 0 {
                    (y & 8) << 4
                } else {
                    (xb & 0x10) << 3
                };
            } else {
                o |= (xb & 0x30) << 2;
            }
            o
        }
        2 => {
            if e == 4 {
                bits(x, 0, 1, 4) | bits(y, 0, 1, 5) | bits(x, 1, 1, 6) | bits(y, 1, 1, 7)
            } else {
                let o = bits(x, 0, 3, e)
                    | bits(y, 1, 2, 3 + e)
                    | bits(x, 3, 1, 5 + e)
                    | bits(y, 3, 1, 6 + e);
                bits(o, 0, 4, 0) | (bits(y, 0, 1, 4)) | bits(o, 4, 3, 5)
            }
        }
        _ => {
            let o = bits(y, 0, 3, e)
                | bits(x, 1, 2, 3 + e)
                | bits(x, 3, 1, 5 + e)
                | bits(y, 3, 1, 6 + e);
            let mut o = bits(o, 0, 4, 0) | bits(x, 0, 1, 4) | bits(o, 4, 3, 5);
            if e == 3 {
                o = bits(o, 0, 6, 0) | bits(x, 1, 2, 6);
            }
            o
        }
    }
}
