//! Where the matrix instructions keep matrix elements in a wave64's
//! registers (CDNA3 ISA, "Matrix Arithmetic Instructions": dependent
//! register layouts; the formulas are those that AMD's matrix instruction
//! calculator tabulates), and how CBSZ/ABID, BLGP and the SMFMAC index
//! sets remap them.

/// The lane and element slot of an input element: row `r` of A (column of
/// B) within block `b`, inner index `k`, for an operand of `rows` rows per
/// block, `blocks` blocks and `per_lane` elements per lane. Consecutive k
/// fill a lane's slots; the next `per_lane` k move up by `rows*blocks`
/// lanes.
#[inline]
pub const fn input_lane(
    rows: usize,
    blocks: usize,
    per_lane: usize,
    r: usize,
    b: usize,
    k: usize,
) -> (usize, usize) {
    (r + rows * (b + blocks * (k / per_lane)), k % per_lane)
}

/// The first register and the lane of result element (`i`, `j`) of block
/// `b` for an `m`x`n` result of `bits`-bit elements (32: a 4-row tile
/// per 4 registers; 64: one row per register pair).
#[inline]
pub const fn output_pos(
    m: usize,
    n: usize,
    bits: usize,
    i: usize,
    j: usize,
    b: usize,
) -> (usize, usize) {
    // Rows per tile: a tile is `tile` consecutive rows in `tile` registers.
    let tile = if bits == 64 { 1 } else { 4 };
    let dwords = bits / 32;
    // Tiles of N lanes side by side in one register set.
    let per_set = 64 / n;
    // Blocks sharing one register set (the 4x4 forms), at least 1.
    let blocks_per_set = {
        let cells = m * n / tile;
        if cells >= 64 { 1 } else { 64 / cells }
    };
    let slot = b * (m * n / 64) + (i / (tile * per_set)) * tile + i % tile;
    let lane = (b % blocks_per_set) * n + ((i / tile) % per_set) * blocks_per_set * n + j;
    (slot * dwords, lane)
}

/// BLGP: the lane whose B value feeds lane `lane` (CDNA3 ISA: 0 normal,
/// 1 lanes 0-31 broadcast to 32-63, 2 lanes 32-63 broadcast to 0-31,
/// 3 rotate down by 16, 4-7 broadcast lane group 0-3 of 16 lanes to all).
#[inline]
pub const fn blgp_source(blgp: u8, lane: usize) -> usize {
    match blgp & 7 {
        0 => lane,
        1 => lane % 32,
        2 => 32 + lane % 32,
        3 => (lane + 16) % 64,
        g => 16 * (g as usize - 4) + lane % 16,
    }
}

/// CBSZ/ABID: the A block that feeds block `b`. The 2^cbsz blocks of each
/// aligned group all read block `abid` of their group; CBSZ beyond
/// log2(blocks) acts as log2(blocks) and ABID is taken modulo 2^cbsz.
#[inline]
pub const fn broadcast_block(blocks: usize, cbsz: u8, abid: u8, b: usize) -> usize {
    let max = blocks.trailing_zeros();
    let c = if (cbsz as u32) < max {
        cbsz as u32
    } else {
        max
    };
    let group = 1usize << c;
    (b & !(group - 1)) + (abid as usize & (group - 1))
}

/// SMFMAC: the bit position of the 2-bit index of compressed slot `slot`
/// in the index register, for `per_lane` compressed A elements per lane.
/// A lane's indices form a set of `2*per_lane` bits; with CBSZ 0, ABID
/// picks the set (sets beyond 32 bits wrap), otherwise set 0 is used.
/// Within a set, each pair of slots (one group of four k) has 4 bits:
/// bits 1:0 give the first slot's position in the group, bits 3:2 the
/// second's.
#[inline]
pub const fn sparse_index_shift(per_lane: usize, cbsz: u8, abid: u8, slot: usize) -> u32 {
    let set_bits = 2 * per_lane;
    let sets = if set_bits >= 32 { 1 } else { 32 / set_bits };
    let set = if cbsz == 0 { abid as usize % sets } else { 0 };
    ((set * set_bits + 2 * slot) % 32) as u32
}
