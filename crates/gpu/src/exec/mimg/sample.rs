//! Sampling: address modes, point / bilinear / trilinear filtering,
//! border colours, depth comparison and gathers, on one level of an image
//! whose texels come from a fetch function (memory in the emulator, an
//! array in the tests).
//!
//! Conventions (the ISA guide's "Image Sampling" and the sampler fields):
//! * A coordinate in texel space is `u * size` for normalised coordinates,
//!   `u` itself when the instruction's `unorm` bit or the sampler's
//!   `FORCE_UNNORMALIZED` is set; the instruction's texel offsets add to it.
//! * Point filtering reads texel `floor(x)` of `x` rounded to the nearest
//!   1/256 texel, the texture unit's sub-texel precision: a coordinate a
//!   rounding error below a texel's edge reads that texel. HIP's point
//!   `tex2D` relies on it: it passes `floor(u * w) * (1 / w)`, which the
//!   unit scales back to `floor(u * w)` give or take an ulp. Bilinear
//!   reads `floor(x - 0.5)` and the next one, weighted by the fraction of
//!   `x - 0.5` (weights in f32, not quantised to that precision).
//! * Address modes map a texel index outside `0..size`: wrap (modulo),
//!   mirror (mirrored repeat), clamp to the last texel, mirror once (about
//!   0, then clamped), and the border modes, whose texels outside the image
//!   are the border colour; the half-border modes also clamp the coordinate
//!   to `[0, size]`, so the border weighs at most one half.
//! * Array layers are `round(slice)` clamped to the layers, never filtered.
//!   A 3D image's z is filtered by `Z_FILTER` (none: as x and y).
//! * Integer formats are point sampled.
//! * Texels arrive already through the T#'s `dst_sel` swizzle; the border
//!   colour is given in that same (result) channel order.

use super::desc::{Dim, Ssharp, Tsharp, clamp, filter};
use crate::exec::op::Fault;

/// What one lane samples.
#[derive(Copy, Clone, Debug, Default)]
pub struct Query {
    /// x, y, z coordinates (normalised or texel space, see `unnorm`);
    /// those the image's dimension does not use are ignored.
    pub coords: [f32; 3],
    /// The array layer (already resolved), 0 for non-arrays.
    pub layer: u32,
    /// Texel offsets (the `_o` forms).
    pub offset: [i32; 3],
    /// Whether the LOD minifies (selects `XY_MIN_FILTER`).
    pub minify: bool,
    /// The depth-comparison reference (`_c` forms).
    pub compare: Option<f32>,
}

/// The texel index an address mode maps `i` to, `None` for the border.
pub fn wrap_index(mode: u8, i: i64, n: u32) -> Option<u32> {
    let n = i64::from(n.max(1));
    let mirror_once = |i: i64| if i < 0 { -1 - i } else { i };
    let inside = |i: i64| (0..n).contains(&i).then_some(i as u32);
    match mode {
        clamp::WRAP => Some(i.rem_euclid(n) as u32),
        clamp::MIRROR => {
            let j = i.rem_euclid(2 * n);
            Some(if j >= n { 2 * n - 1 - j } else { j } as u32)
        }
        clamp::CLAMP_LAST_TEXEL => Some(i.clamp(0, n - 1) as u32),
        clamp::MIRROR_ONCE_LAST_TEXEL => Some(mirror_once(i).clamp(0, n - 1) as u32),
        clamp::CLAMP_HALF_BORDER | clamp::CLAMP_BORDER => inside(i),
        _ => inside(mirror_once(i)),
    }
}

/// The texels (index or border) and weights one axis contributes.
fn axis(mode: u8, x: f32, n: u32, linear: bool) -> [(Option<u32>, f32); 2] {
    let nf = n as f32;
    let x = match mode {
        clamp::CLAMP_HALF_BORDER => x.clamp(0.0, nf),
        clamp::MIRROR_ONCE_HALF_BORDER => x.abs().min(nf),
        _ => x,
    };
    if !linear {
        let i = floor_i64(subtexel(x));
        return [(wrap_index(mode, i, n), 1.0), (None, 0.0)];
    }
    let xs = x - 0.5;
    let i0 = floor_i64(xs);
    let a = xs - xs.floor();
    [
        (wrap_index(mode, i0, n), 1.0 - a),
        (wrap_index(mode, i0 + 1, n), a),
    ]
}

/// Texels are divided into this many steps when the unit converts a
/// coordinate to fixed point.
const SUBTEXEL_STEPS: f32 = 256.0;

/// `x` rounded to the nearest sub-texel step.
fn subtexel(x: f32) -> f32 {
    (x * SUBTEXEL_STEPS).round_ties_even() / SUBTEXEL_STEPS
}

fn floor_i64(x: f32) -> i64 {
    if x.is_nan() {
        0
    } else {
        x.floor().clamp(-((1u64 << 40) as f32), (1u64 << 40) as f32) as i64
    }
}

/// Passes the depth comparison `reference FUNC texel`.
fn compare(func: u8, reference: f32, texel: f32) -> bool {
    match func {
        0 => false,
        1 => reference < texel,
        2 => reference == texel,
        3 => reference <= texel,
        4 => reference > texel,
        5 => reference != texel,
        6 => reference >= texel,
        _ => true,
    }
}

/// The border colour as results (f32 bits, or integers for uint/sint).
fn border(t: &Tsharp, s: &Ssharp) -> [u32; 4] {
    s.border.map(|c| {
        if t.format.is_int() {
            c as u32
        } else {
            c.to_bits()
        }
    })
}

/// The texel-space coordinates and sizes per axis, with the layer.
struct Space {
    x: [f32; 3],
    n: [u32; 3],
    axes: usize,
}

fn space(t: &Tsharp, s: &Ssharp, unnorm: bool, q: &Query) -> Space {
    let size = t.level_size(0);
    let axes = t.dim.coords();
    let normalised = !(unnorm || s.force_unnormalized);
    let mut x = [0.0; 3];
    for k in 0..axes {
        let scale = if normalised { size[k] as f32 } else { 1.0 };
        x[k] = q.coords[k] * scale + q.offset[k] as f32;
    }
    Space { x, n: size, axes }
}

/// Samples one lane. `fetch(x, y, z)` returns the swizzled texel at an
/// in-range index (`z` the depth slice or layer).
pub fn sample(
    t: &Tsharp,
    s: &Ssharp,
    unnorm: bool,
    q: &Query,
    fetch: &mut dyn FnMut(u32, u32, u32) -> Result<[u32; 4], Fault>,
) -> Result<[u32; 4], Fault> {
    let sp = space(t, s, unnorm, q);
    let xy = if q.minify { s.min_filter } else { s.mag_filter };
    let linear_xy = matches!(xy, filter::BILINEAR | filter::ANISO_BILINEAR) && !t.format.is_int();
    let linear_z = match s.z_filter {
        0 => linear_xy,
        2 => !t.format.is_int(),
        _ => false,
    };
    let mut taps = [[(Some(0u32), 1.0f32), (None, 0.0)]; 3];
    for k in 0..sp.axes {
        let lin = if k == 2 { linear_z } else { linear_xy };
        taps[k] = axis(s.clamp[k], sp.x[k], sp.n[k], lin);
    }
    if t.dim.arrayed() {
        taps[sp.axes] = [(Some(q.layer), 1.0), (None, 0.0)];
    }
    let bc = border(t, s);
    let mut acc = [0.0f32; 4];
    let mut int_result = None;
    for &(iz, wz) in &taps[2] {
        for &(iy, wy) in &taps[1] {
            for &(ix, wx) in &taps[0] {
                let w = wx * wy * wz;
                if w == 0.0 {
                    continue;
                }
                let texel = match (ix, iy, iz) {
                    (Some(x), Some(y), Some(z)) => fetch(x, y, z)?,
                    _ => bc,
                };
                if let Some(r) = q.compare {
                    let pass = compare(s.compare_func, r, f32::from_bits(texel[0]));
                    let v = if pass { 1.0 } else { 0.0 };
                    acc.iter_mut().for_each(|a| *a += w * v);
                } else if t.format.is_int() {
                    int_result.get_or_insert(texel);
                } else {
                    for c in 0..4 {
                        acc[c] += w * f32::from_bits(texel[c]);
                    }
                }
            }
        }
    }
    if q.compare.is_none() && t.format.is_int() {
        return Ok(int_result.unwrap_or(bc));
    }
    Ok(acc.map(f32::to_bits))
}

/// Gathers component `comp` of the four texels a bilinear 2D sample
/// would read, in the order (i0, j1), (i1, j1), (i1, j0), (i0, j0)
/// (`i` along x, `j` along y); with a reference, each is the comparison
/// result.
pub fn gather(
    t: &Tsharp,
    s: &Ssharp,
    unnorm: bool,
    q: &Query,
    comp: usize,
    fetch: &mut dyn FnMut(u32, u32, u32) -> Result<[u32; 4], Fault>,
) -> Result<[u32; 4], Fault> {
    if !matches!(t.dim, Dim::D2 | Dim::D2Array) {
        return Err(Fault::Invalid(format!(
            "image_gather4 on a {} image: gathers read 2D images",
            t.dim.name()
        )));
    }
    let sp = space(t, s, unnorm, q);
    let ax = axis(s.clamp[0], sp.x[0], sp.n[0], true);
    let ay = axis(s.clamp[1], sp.x[1], sp.n[1], true);
    let bc = border(t, s);
    let mut one = |ix: Option<u32>, iy: Option<u32>| -> Result<u32, Fault> {
        let texel = match (ix, iy) {
            (Some(x), Some(y)) => fetch(x, y, q.layer)?,
            _ => bc,
        };
        Ok(match q.compare {
            Some(r) => {
                let pass = compare(s.compare_func, r, f32::from_bits(texel[0]));
                if pass { 1.0f32 } else { 0.0 }.to_bits()
            }
            None => texel[comp],
        })
    };
    Ok([
        one(ax[0].0, ay[1].0)?,
        one(ax[1].0, ay[1].0)?,
        one(ax[1].0, ay[0].0)?,
        one(ax[0].0, ay[0].0)?,
    ])
}
