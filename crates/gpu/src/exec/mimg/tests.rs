//! Image instruction tests: descriptor decoding field by field, formats,
//! and sampling against a CPU reference written here (a tent-filter
//! formulation of nearest and bilinear filtering, address modes by
//! reflection and repetition), then snippets assembled by llvm-mc-22 run
//! on the wave engine.

use super::desc::{Dim, Ssharp, Tsharp, clamp, filter};
use super::sample::{self, Query};
use super::texel::{Format, num};
use crate::exec::op::Fault;
use crate::exec::testing::run;
use crate::mem::{Perms, Vm};
use rocjitsu_isa::Target;

/// T# fields, as a test writes them.
#[derive(Clone, Copy)]
struct T {
    base: u64,
    data: u32,
    num: u32,
    width: u32,
    height: u32,
    depth: u32,
    pitch: u32,
    ty: u32,
    dst_sel: [u32; 4],
    sw_mode: u32,
    base_level: u32,
    last_level: u32,
}

impl T {
    fn new(base: u64, data: u32, num: u32, width: u32, height: u32) -> T {
        T {
            base,
            data,
            num,
            width,
            height,
            depth: 1,
            pitch: width,
            ty: 9,
            dst_sel: [4, 5, 6, 7],
            sw_mode: 0,
            base_level: 0,
            last_level: 0,
        }
    }

    fn words(&self) -> [u32; 8] {
        let a = self.base >> 8;
        let ds = self.dst_sel;
        [
            a as u32,
            ((a >> 32) as u32 & 0xff) | (self.data << 20) | (self.num << 26),
            (self.width - 1) | ((self.height - 1) << 14),
            ds[0]
                | (ds[1] << 3)
                | (ds[2] << 6)
                | (ds[3] << 9)
                | (self.base_level << 12)
                | (self.last_level << 16)
                | (self.sw_mode << 20)
                | (self.ty << 28),
            (self.depth - 1) | ((self.pitch - 1) << 13),
            0,
            0,
            0,
        ]
    }
}

/// S# words from fields.
fn sampler(clamp_xyz: [u8; 3], filt: u8, unnorm: bool, border: u32) -> [u32; 4] {
    let c = clamp_xyz.map(u32::from);
    let f = u32::from(filt);
    [
        c[0] | (c[1] << 3) | (c[2] << 6) | (u32::from(unnorm) << 15),
        4095 << 12,
        (f << 20) | (f << 22),
        border << 30,
    ]
}

#[test]
fn tsharp_fields_decode() {
    let mut t = T::new(0x7f12_3456_7800, 10, num::UNORM as u32, 300, 200);
    t.pitch = 320;
    t.dst_sel = [6, 5, 4, 1];
    t.ty = 13;
    t.depth = 7;
    let d = Tsharp::decode(t.words()).unwrap();
    assert_eq!(d.base, 0x7f12_3456_7800);
    assert_eq!((d.width, d.height, d.depth, d.pitch), (300, 200, 7, 320));
    assert_eq!(d.dim, Dim::D2Array);
    assert_eq!(d.dst_sel, [6, 5, 4, 1]);
    assert_eq!(d.format.bytes, 4);
    assert_eq!(d.format.comps, &[8, 8, 8, 8]);
    // A 2D image's depth field is ignored; a 1D image has one row.
    let mut t1 = T::new(0x1000, 4, num::FLOAT as u32, 64, 9);
    t1.ty = 8;
    let d1 = Tsharp::decode(t1.words()).unwrap();
    assert_eq!((d1.dim, d1.height, d1.depth), (Dim::D1, 1, 1));
    assert_eq!(d1.texel_addr(5, 0, 0), 0x1000 + 20);
    // Linear addressing: rows `pitch` elements apart, slices pitch * height.
    let mut t3 = T::new(0x10000, 12, num::FLOAT as u32, 5, 3);
    t3.ty = 10;
    t3.depth = 4;
    t3.pitch = 8;
    let d3 = Tsharp::decode(t3.words()).unwrap();
    assert_eq!(
        d3.texel_addr(1, 2, 3),
        0x10000 + (3 * 8 * 3 + 2 * 8 + 1) * 8
    );
}

#[test]
fn ssharp_fields_decode() {
    let mut w = sampler(
        [clamp::MIRROR, clamp::CLAMP_BORDER, clamp::WRAP],
        filter::BILINEAR,
        true,
        2,
    );
    w[0] |= 5 << 12;
    // MIN_LOD 1.5, MAX_LOD 3.25 (4.8 fixed point); LOD_BIAS -0.5 (s6.8).
    w[1] = (384) | (832 << 12);
    w[2] |= (0x3fff & (-128i32 as u32)) | (1 << 26);
    let s = Ssharp::decode(w).unwrap();
    assert_eq!(s.clamp, [clamp::MIRROR, clamp::CLAMP_BORDER, clamp::WRAP]);
    assert!(s.force_unnormalized);
    assert_eq!(s.compare_func, 5);
    assert_eq!((s.min_lod, s.max_lod, s.lod_bias), (1.5, 3.25, -0.5));
    assert_eq!((s.mag_filter, s.min_filter, s.mip_filter), (1, 1, 1));
    assert_eq!(s.border, [1.0; 4]);
    let e = Ssharp::decode(sampler([0; 3], 0, false, 3)).unwrap_err();
    assert!(e.to_string().contains("BORDER_COLOR_TYPE 3"), "{e}");
}

#[test]
fn unsupported_format_and_tiling_name_themselves() {
    let e = Tsharp::decode(T::new(0x1000, 20, 0, 4, 4).words()).unwrap_err();
    assert!(e.to_string().contains("DATA_FORMAT 8_24 (20)"), "{e}");
    let e = Tsharp::decode(T::new(0x1000, 10, 7, 4, 4).words()).unwrap_err();
    assert!(
        e.to_string()
            .contains("DATA_FORMAT 8_8_8_8 (10) NUM_FORMAT FLOAT (7)"),
        "{e}"
    );
    // Tiled 2D images are addressed; tiled 3D ones and variable-size
    // blocks fault naming the mode.
    let mut t = T::new(0x1000, 10, 0, 4, 4);
    t.sw_mode = 25;
    assert!(Tsharp::decode(t.words()).unwrap().tiling.is_some());
    t.ty = 10;
    let e = Tsharp::decode(t.words()).unwrap_err();
    assert!(
        e.to_string()
            .contains("3D image with swizzle mode SW_64KB_S_X"),
        "{e}"
    );
    t.ty = 9;
    t.sw_mode = 13;
    let e = Tsharp::decode(t.words()).unwrap_err();
    assert!(e.to_string().contains("SW_VAR_S"), "{e}");
    let mut t = T::new(0x1000, 10, 0, 4, 4);
    t.ty = 2;
    assert!(Tsharp::decode(t.words()).is_err());
}

#[test]
fn formats_decode_and_encode() {
    let f = |d, n| Format::new(d, n).unwrap();
    let unorm8 = f(10, num::UNORM as u32);
    let v = unorm8.decode(&[0, 51, 255, 128]);
    assert_eq!(v.map(f32::from_bits), [0.0, 0.2, 1.0, 128.0 / 255.0]);
    assert_eq!(unorm8.encode(v).unwrap(), vec![0, 51, 255, 128]);
    // Out of range and NaN clamp; ties round to even (0.5 * 255 = 127.5).
    let enc = unorm8
        .encode([
            (-1.0f32).to_bits(),
            2.0f32.to_bits(),
            f32::NAN.to_bits(),
            0.5f32.to_bits(),
        ])
        .unwrap();
    assert_eq!(enc, vec![0, 255, 0, 128]);
    let snorm8 = f(3, num::SNORM as u32);
    let v = snorm8.decode(&[0x81, 0x80]);
    // -127 / 127 = -1; -128 clamps to -1; missing z, w read 0, 1.
    assert_eq!(v.map(f32::from_bits), [-1.0, -1.0, 0.0, 1.0]);
    let sint16 = f(5, num::SINT as u32);
    assert_eq!(
        sint16.decode(&[0xfe, 0xff, 0x34, 0x12]),
        [(-2i32) as u32, 0x1234, 0, 1]
    );
    assert_eq!(
        sint16.encode([(-40000i32) as u32, 40000, 0, 0]).unwrap(),
        (-32768i16)
            .to_le_bytes()
            .into_iter()
            .chain(32767i16.to_le_bytes())
            .collect::<Vec<_>>()
    );
    let uint8 = f(1, num::UINT as u32);
    assert_eq!(uint8.encode([300, 0, 0, 0]).unwrap(), vec![255]);
    let half = f(2, num::FLOAT as u32);
    assert_eq!(
        f32::from_bits(half.decode(&0x3e00u16.to_le_bytes())[0]),
        1.5
    );
    assert_eq!(
        half.encode([0.333f32.to_bits(), 0, 0, 0]).unwrap(),
        0x3554u16.to_le_bytes()
    );
    let rgb565 = f(16, num::UNORM as u32);
    // x in the low 5 bits, y the next 6, z the top 5.
    let v = rgb565.decode(&(31u16 | (63 << 5)).to_le_bytes());
    assert_eq!(v.map(f32::from_bits), [1.0, 1.0, 0.0, 1.0]);
    let f11 = f(7, num::FLOAT as u32);
    // x: 10-bit float 1.0 (exponent 15 << 5); y: 11-bit 2.0 (16 << 6).
    let raw = (15u32 << 5) | ((16u32 << 6) << 10);
    let v = f11.decode(&raw.to_le_bytes());
    assert_eq!(v.map(f32::from_bits)[..2], [1.0, 2.0]);
    // Components beyond the first 64 bits (a 128-bit element).
    let rgba32 = f(14, num::UINT as u32);
    let raw: Vec<u8> = [1u32, 2, 0xdead_beef, 4]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(rgba32.decode(&raw), [1, 2, 0xdead_beef, 4]);
    assert_eq!(rgba32.encode([1, 2, 0xdead_beef, 4]).unwrap(), raw);
    let srgb = f(1, num::SRGB as u32);
    let lin = f32::from_bits(srgb.decode(&[188])[0]);
    let c = 188.0f32 / 255.0;
    assert!((lin - ((c + 0.055) / 1.055).powf(2.4)).abs() < 1e-6);
}

// --- the CPU reference ----------------------------------------------------------

/// The texel index address mode `mode` reads for index `i` of `n`, by
/// reflection and repetition rather than modular arithmetic.
fn ref_index(mode: u8, mut i: i64, n: i64) -> Option<i64> {
    match mode {
        clamp::WRAP => {
            while i < 0 {
                i += n;
            }
            while i >= n {
                i -= n;
            }
            Some(i)
        }
        clamp::MIRROR => {
            // Reflect about the edges until inside.
            loop {
                if i < 0 {
                    i = -i - 1;
                } else if i >= n {
                    i = 2 * n - 1 - i;
                } else {
                    return Some(i);
                }
            }
        }
        clamp::CLAMP_LAST_TEXEL => Some(i.max(0).min(n - 1)),
        clamp::MIRROR_ONCE_LAST_TEXEL => Some(if i < 0 { -i - 1 } else { i }.min(n - 1)),
        clamp::CLAMP_BORDER | clamp::CLAMP_HALF_BORDER => (i >= 0 && i < n).then_some(i),
        _ => {
            let j = if i < 0 { -i - 1 } else { i };
            (j < n).then_some(j)
        }
    }
}

/// Reference sample of a 2D RGBA f32 image `img[y][x]`: the weighted sum
/// over texels whose centre is within one texel (tent filter) for
/// bilinear, the texel containing the point for nearest.
fn ref_sample(
    img: &[Vec<[f32; 4]>],
    modes: [u8; 2],
    linear: bool,
    normalised: bool,
    u: f32,
    v: f32,
    border: [f32; 4],
) -> [f32; 4] {
    let (h, w) = (img.len() as i64, img[0].len() as i64);
    let mut x = if normalised { u * w as f32 } else { u };
    let mut y = if normalised { v * h as f32 } else { v };
    let half = |m: u8, c: f32, n: i64| match m {
        clamp::CLAMP_HALF_BORDER => c.max(0.0).min(n as f32),
        clamp::MIRROR_ONCE_HALF_BORDER => c.abs().min(n as f32),
        _ => c,
    };
    x = half(modes[0], x, w);
    y = half(modes[1], y, h);
    let texel = |i: i64, j: i64| match (ref_index(modes[0], i, w), ref_index(modes[1], j, h)) {
        (Some(a), Some(b)) => img[b as usize][a as usize],
        _ => border,
    };
    if !linear {
        let snap = |c: f32| (c * 256.0).round_ties_even() / 256.0;
        return texel(snap(x).floor() as i64, snap(y).floor() as i64);
    }
    let mut out = [0.0f32; 4];
    let (cx, cy) = (x.floor() as i64, y.floor() as i64);
    for j in cy - 2..=cy + 2 {
        for i in cx - 2..=cx + 2 {
            let wx = (1.0 - (x - (i as f32 + 0.5)).abs()).max(0.0);
            let wy = (1.0 - (y - (j as f32 + 0.5)).abs()).max(0.0);
            if wx * wy > 0.0 {
                let t = texel(i, j);
                for c in 0..4 {
                    out[c] += wx * wy * t[c];
                }
            }
        }
    }
    out
}

fn lcg(s: &mut u64) -> f32 {
    *s = s
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*s >> 40) as f32) / (1u64 << 24) as f32
}

fn test_image(w: usize, h: usize, seed: u64) -> Vec<Vec<[f32; 4]>> {
    let mut s = seed;
    (0..h)
        .map(|_| {
            (0..w)
                .map(|_| [lcg(&mut s), lcg(&mut s), lcg(&mut s), lcg(&mut s)])
                .collect()
        })
        .collect()
}

fn f32_image_tsharp(w: u32, h: u32) -> Tsharp {
    Tsharp::decode(T::new(0x1000, 14, num::FLOAT as u32, w, h).words()).unwrap()
}

#[test]
fn sampling_matches_the_reference() {
    let (w, h) = (5usize, 3usize);
    let img = test_image(w, h, 1);
    let t = f32_image_tsharp(w as u32, h as u32);
    let modes = [
        clamp::WRAP,
        clamp::MIRROR,
        clamp::CLAMP_LAST_TEXEL,
        clamp::MIRROR_ONCE_LAST_TEXEL,
        clamp::CLAMP_HALF_BORDER,
        clamp::MIRROR_ONCE_HALF_BORDER,
        clamp::CLAMP_BORDER,
        clamp::MIRROR_ONCE_BORDER,
    ];
    let mut seed = 5;
    let mut checked = 0;
    for &mx in &modes {
        for &my in &[clamp::WRAP, mx, clamp::CLAMP_BORDER] {
            for filt in [filter::POINT, filter::BILINEAR] {
                for unnorm in [false, true] {
                    for border in [0u32, 1, 2] {
                        let s = Ssharp::decode(sampler([mx, my, 0], filt, unnorm, border)).unwrap();
                        for _ in 0..12 {
                            // Coordinates well outside the image on both sides.
                            let (u, v) = (lcg(&mut seed) * 4.0 - 1.5, lcg(&mut seed) * 4.0 - 1.5);
                            let (u, v) = if unnorm {
                                (u * w as f32, v * h as f32)
                            } else {
                                (u, v)
                            };
                            let q = Query {
                                coords: [u, v, 0.0],
                                ..Query::default()
                            };
                            let got = sample::sample(&t, &s, false, &q, &mut |x, y, _| {
                                Ok(img[y as usize][x as usize].map(f32::to_bits))
                            })
                            .unwrap()
                            .map(f32::from_bits);
                            let want = ref_sample(
                                &img,
                                [mx, my],
                                filt == filter::BILINEAR,
                                !unnorm,
                                u,
                                v,
                                s.border,
                            );
                            for c in 0..4 {
                                assert!(
                                    (got[c] - want[c]).abs() <= 1e-5,
                                    "modes {mx}/{my} filter {filt} unnorm {unnorm} at ({u}, {v}) \
                                     channel {c}: got {} want {}",
                                    got[c],
                                    want[c]
                                );
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(checked, 8 * 3 * 2 * 2 * 3 * 12);
}

/// HIP's point-filtered `tex2D` with normalised coordinates passes
/// `floor(u * w) * rcp(w)` so that the texture unit's sub-texel rounding
/// cannot move `u` across a texel edge; scaled back, that lands within an
/// ulp of the integer `k = floor(u * w)`, on either side. With wrap, texel
/// `k mod w` must come back (HIP's `texture.hip` at (-0.21, -0.791) read
/// the texel before it).
#[test]
fn point_sampling_rounds_to_sub_texel_precision() {
    let mut checked = 0;
    for w in 1..40u32 {
        let t = f32_image_tsharp(w, 1);
        let s = Ssharp::decode(sampler([clamp::WRAP; 3], filter::POINT, false, 0)).unwrap();
        let rcp = 1.0 / w as f32;
        for k in -3 * w as i64..3 * w as i64 {
            let q = Query {
                coords: [k as f32 * rcp, 0.5, 0.0],
                ..Query::default()
            };
            let got = sample::sample(&t, &s, false, &q, &mut |x, _, _| Ok([x, 0, 0, 0])).unwrap();
            assert_eq!(
                i64::from(got[0]),
                k.rem_euclid(i64::from(w)),
                "width {w}, texel {k}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 6 * (1..40).sum::<i64>());
}

#[test]
fn instruction_unorm_bit_and_offsets_address_texels() {
    let img = test_image(4, 4, 3);
    let t = f32_image_tsharp(4, 4);
    let s = Ssharp::decode(sampler(
        [clamp::CLAMP_LAST_TEXEL; 3],
        filter::POINT,
        false,
        0,
    ))
    .unwrap();
    let mut fetch = |x: u32, y: u32, _| Ok(img[y as usize][x as usize].map(f32::to_bits));
    // The instruction's unorm bit makes coordinates texel-space.
    let q = Query {
        coords: [2.5, 1.5, 0.0],
        offset: [-1, 2, 0],
        ..Query::default()
    };
    let got = sample::sample(&t, &s, true, &q, &mut fetch).unwrap();
    assert_eq!(got, img[3][1].map(f32::to_bits));
    // Normalised: 0.5 of 4 texels is texel 2.
    let q = Query {
        coords: [0.5, 0.25, 0.0],
        ..Query::default()
    };
    assert_eq!(
        sample::sample(&t, &s, false, &q, &mut fetch).unwrap(),
        img[1][2].map(f32::to_bits)
    );
}

#[test]
fn gather_returns_the_bilinear_footprint() {
    let img = test_image(4, 3, 9);
    let t = f32_image_tsharp(4, 3);
    let s = Ssharp::decode(sampler([clamp::WRAP; 3], filter::POINT, true, 0)).unwrap();
    let mut fetch = |x: u32, y: u32, _| Ok(img[y as usize][x as usize].map(f32::to_bits));
    // Texel space (3.9, 0.2): i0 = 3, i1 = 0 (wrapped), j0 = 2 (wrapped), j1 = 0.
    let q = Query {
        coords: [3.9, 0.2, 0.0],
        ..Query::default()
    };
    for comp in 0..4 {
        let got = sample::gather(&t, &s, true, &q, comp, &mut fetch).unwrap();
        let want = [
            img[0][3][comp],
            img[0][0][comp],
            img[2][0][comp],
            img[2][3][comp],
        ];
        assert_eq!(got.map(f32::from_bits), want, "component {comp}");
    }
    // With a reference, each texel's comparison (LESS: ref < texel).
    let mut sw = sampler([clamp::WRAP; 3], filter::POINT, true, 0);
    sw[0] |= 1 << 12;
    let s = Ssharp::decode(sw).unwrap();
    let q = Query {
        compare: Some(0.5),
        ..q
    };
    let got = sample::gather(&t, &s, true, &q, 0, &mut fetch).unwrap();
    let want = [img[0][3][0], img[0][0][0], img[2][0][0], img[2][3][0]]
        .map(|x| f32::from(u8::from(0.5 < x)));
    assert_eq!(got.map(f32::from_bits), want);
}

#[test]
fn volume_sampling_is_trilinear() {
    // A 3D image whose texel value is x + 10 y + 100 z: trilinear
    // filtering of a linear function reproduces it inside the image.
    let mut t = T::new(0x1000, 4, num::FLOAT as u32, 4, 4);
    t.ty = 10;
    t.depth = 4;
    let t = Tsharp::decode(t.words()).unwrap();
    let s = Ssharp::decode(sampler(
        [clamp::CLAMP_LAST_TEXEL; 3],
        filter::BILINEAR,
        false,
        0,
    ))
    .unwrap();
    let q = Query {
        coords: [0.4, 0.55, 0.3],
        ..Query::default()
    };
    let got = sample::sample(&t, &s, false, &q, &mut |x, y, z| {
        Ok([
            (x as f32 + 10.0 * y as f32 + 100.0 * z as f32).to_bits(),
            0,
            0,
            0,
        ])
    })
    .unwrap();
    let (x, y, z) = (0.4 * 4.0 - 0.5, 0.55 * 4.0 - 0.5, 0.3 * 4.0 - 0.5);
    let want = x + 10.0 * y + 100.0 * z;
    assert!(
        (f32::from_bits(got[0]) - want).abs() < 1e-4,
        "{} vs {want}",
        f32::from_bits(got[0])
    );
}

#[test]
fn integer_formats_are_point_sampled() {
    let t = Tsharp::decode(T::new(0x1000, 4, num::UINT as u32, 4, 1).words()).unwrap();
    let s = Ssharp::decode(sampler(
        [clamp::CLAMP_LAST_TEXEL; 3],
        filter::BILINEAR,
        true,
        0,
    ))
    .unwrap();
    let q = Query {
        coords: [2.9, 0.0, 0.0],
        ..Query::default()
    };
    let got = sample::sample(&t, &s, true, &q, &mut |x, _, _| Ok([x * 7, 0, 0, 1])).unwrap();
    assert_eq!(got, [14, 0, 0, 1]);
}

// --- instructions on the wave engine ------------------------------------------------

/// Puts a T# in s[8:15] and an S# in s[16:19].
fn set_descs(w: &mut crate::exec::wave::Wave, t: [u32; 8], s: [u32; 4]) {
    w.s[8..16].copy_from_slice(&t);
    w.s[16..20].copy_from_slice(&s);
}

/// An RGBA8 unorm image of `w` x `h` texels with a padded pitch, filled
/// with a pattern; returns its bytes.
fn rgba8(w: usize, h: usize, pitch: usize) -> Vec<u8> {
    let mut b = vec![0u8; pitch * h * 4];
    for y in 0..h {
        for x in 0..w {
            for c in 0..4 {
                b[(y * pitch + x) * 4 + c] = (x * 37 + y * 11 + c * 53) as u8;
            }
        }
    }
    b
}

#[test]
fn image_load_reads_texels_through_dst_sel() {
    let (w, h, pitch) = (7usize, 5usize, 8usize);
    let data = rgba8(w, h, pitch);
    let r = run(
        Target::Gfx90a,
        "image_load v[4:7], v[0:1], s[8:15] dmask:0xf unorm",
        |wv, vm| {
            let base = vm.alloc(data.len() as u64, Perms::RW);
            vm.fill(base, &data).unwrap();
            let mut t = T::new(base, 10, num::UNORM as u32, w as u32, h as u32);
            t.pitch = pitch as u32;
            // BGRA in memory read as RGBA, alpha forced to 1.
            t.dst_sel = [6, 5, 4, 1];
            set_descs(wv, t.words(), [0; 4]);
            for l in 0..64 {
                wv.v[0][l] = (l % 9) as u32;
                wv.v[1][l] = (l / 9) as u32;
            }
        },
    )
    .unwrap();
    for l in 0..64 {
        let (x, y) = (l % 9, l / 9);
        let want: [f32; 4] = if x < w && y < h {
            let at = (y * pitch + x) * 4;
            [
                data[at + 2] as f32 / 255.0,
                data[at + 1] as f32 / 255.0,
                data[at] as f32 / 255.0,
                1.0,
            ]
        } else {
            [0.0; 4]
        };
        for c in 0..4 {
            assert_eq!(
                f32::from_bits(r.wave.v[4 + c][l]),
                want[c],
                "lane {l} channel {c}"
            );
        }
    }
}

#[test]
fn image_store_then_load_round_trips_and_drops_outside_stores() {
    let (w, h) = (6u32, 4u32);
    let mut base = 0;
    let r = run(
        Target::Gfx90a,
        "image_store v[4:5], v[0:1], s[8:15] dmask:0x3 unorm\n\
         s_waitcnt vmcnt(0)\n\
         image_load v[8:9], v[0:1], s[8:15] dmask:0x3 unorm",
        |wv, vm| {
            base = vm.alloc(u64::from(w * h * 4), Perms::RW);
            // 16_16 sint.
            let t = T::new(base, 5, num::SINT as u32, w, h);
            set_descs(wv, t.words(), [0; 4]);
            for l in 0..64 {
                wv.v[0][l] = l as u32 % 8;
                wv.v[1][l] = l as u32 / 8;
                wv.v[4][l] = (l as i32 * 1000 - 20000) as u32;
                wv.v[5][l] = (-(l as i32)) as u32;
            }
        },
    )
    .unwrap();
    let mem = r.vm.read_vec(base, u64::from(w * h * 4)).unwrap();
    for l in 0..64u32 {
        let (x, y) = (l % 8, l / 8);
        let inside = x < w && y < h;
        let want_x = (l as i32 * 1000 - 20000).clamp(-32768, 32767);
        let want = if inside {
            [want_x as u32, (-(l as i32)) as u32]
        } else {
            [0, 0]
        };
        assert_eq!(
            [r.wave.v[8][l as usize], r.wave.v[9][l as usize]],
            want,
            "lane {l}"
        );
        if inside {
            let at = ((y * w + x) * 4) as usize;
            assert_eq!(i16::from_le_bytes([mem[at], mem[at + 1]]) as i32, want_x);
        }
    }
}

#[test]
fn image_atomics_return_old_values_with_glc() {
    let mut base = 0;
    let r = run(
        Target::Gfx90a,
        "image_atomic_add v2, v[0:1], s[8:15] dmask:0x1 unorm glc\n\
         s_waitcnt vmcnt(0)\n\
         image_atomic_cmpswap v[4:5], v[0:1], s[8:15] dmask:0x3 unorm glc",
        |wv, vm| {
            base = vm.alloc(16, Perms::RW);
            vm.fill(base, &[10, 0, 0, 0, 20, 0, 0, 0, 30, 0, 0, 0, 40, 0, 0, 0])
                .unwrap();
            set_descs(wv, T::new(base, 4, num::UINT as u32, 2, 2).words(), [0; 4]);
            for l in 0..64 {
                wv.v[0][l] = (l % 2) as u32;
                wv.v[1][l] = ((l / 2) % 2) as u32;
                wv.v[2][l] = 1;
                // Swap in 1000 + lane where the value is the final sum.
                wv.v[4][l] = 1000 + l as u32;
                wv.v[5][l] = [26, 36, 46, 56][l % 4];
            }
        },
    )
    .unwrap();
    let mem = r.vm.read_vec(base, 16).unwrap();
    for t in 0..4usize {
        // 16 lanes add 1 to each texel; the first lane of each texel to
        // compare against the sum swaps its value in.
        let v = u32::from_le_bytes(mem[t * 4..t * 4 + 4].try_into().unwrap());
        assert_eq!(v, 1000 + t as u32, "texel {t}");
    }
    let mut olds: Vec<u32> = (0..64)
        .filter(|l| l % 4 == 0)
        .map(|l| r.wave.v[2][l])
        .collect();
    olds.sort();
    assert_eq!(olds, (10..26).collect::<Vec<_>>());
}

#[test]
fn image_sample_filters_bilinearly_with_normalised_coordinates() {
    let (w, h) = (8usize, 8usize);
    let img = test_image(w, h, 11);
    let bytes: Vec<u8> = img
        .iter()
        .flatten()
        .flatten()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    let coords: Vec<(f32, f32)> = (0..64)
        .map(|l| ((l % 8) as f32 * 0.13 + 0.01, (l / 8) as f32 * 0.11 - 0.05))
        .collect();
    let r = run(
        Target::Gfx90a,
        "image_sample v[4:7], v[0:1], s[8:15], s[16:19] dmask:0xf",
        |wv, vm| {
            let base = vm.alloc(bytes.len() as u64, Perms::RW);
            vm.fill(base, &bytes).unwrap();
            let t = T::new(base, 14, num::FLOAT as u32, w as u32, h as u32);
            set_descs(
                wv,
                t.words(),
                sampler(
                    [clamp::MIRROR, clamp::CLAMP_LAST_TEXEL, 0],
                    filter::BILINEAR,
                    false,
                    0,
                ),
            );
            for l in 0..64 {
                wv.v[0][l] = coords[l].0.to_bits();
                wv.v[1][l] = coords[l].1.to_bits();
            }
        },
    )
    .unwrap();
    for l in 0..64 {
        let want = ref_sample(
            &img,
            [clamp::MIRROR, clamp::CLAMP_LAST_TEXEL],
            true,
            true,
            coords[l].0,
            coords[l].1,
            [0.0; 4],
        );
        for c in 0..4 {
            let got = f32::from_bits(r.wave.v[4 + c][l]);
            assert!(
                (got - want[c]).abs() < 1e-5,
                "lane {l} channel {c}: {got} vs {} (all {:?} vs {want:?}, coords {:?})",
                want[c],
                [0, 1, 2, 3].map(|k| f32::from_bits(r.wave.v[4 + k][l])),
                coords[l]
            );
        }
    }
}

#[test]
fn image_get_resinfo_reports_the_size() {
    let r = run(
        Target::Gfx90a,
        "image_get_resinfo v[4:7], v0, s[8:15] dmask:0xf",
        |wv, _| {
            let mut t = T::new(0x10000, 10, 0, 100, 37);
            t.ty = 13;
            t.depth = 6;
            set_descs(wv, t.words(), [0; 4]);
            wv.v[0] = [0; 64];
            wv.v[0][1] = 2;
        },
    )
    .unwrap();
    assert_eq!([0, 1, 2, 3].map(|c| r.wave.v[4 + c][0]), [100, 37, 6, 1]);
    assert_eq!([0, 1, 2, 3].map(|c| r.wave.v[4 + c][1]), [25, 9, 6, 1]);
}

#[test]
fn unsupported_format_faults_the_wave_naming_it() {
    let e = run(
        Target::Gfx90a,
        "image_load v[4:7], v[0:1], s[8:15] dmask:0xf unorm",
        |wv, _| {
            // DATA_FORMAT 24_8 (21), UNORM.
            set_descs(wv, T::new(0x10000, 21, 0, 4, 4).words(), [0; 4]);
        },
    )
    .err()
    .expect("the wave faults");
    match e.0 {
        Fault::Invalid(m) => assert!(
            m.contains("DATA_FORMAT 24_8 (21) NUM_FORMAT UNORM (0)"),
            "{m}"
        ),
        f => panic!("unexpected fault {f:?}"),
    }
}

#[test]
fn the_vm_backs_texel_reads() {
    // A T# pointing at unmapped memory faults with a memory fault.
    let e = run(
        Target::Gfx90a,
        "image_load v4, v[0:1], s[8:15] dmask:0x1 unorm",
        |wv, _| {
            set_descs(
                wv,
                T::new(0xdead_0000, 4, num::UINT as u32, 4, 4).words(),
                [0; 4],
            );
            wv.v[0] = [0; 64];
            wv.v[1] = [0; 64];
        },
    )
    .err()
    .expect("the wave faults");
    assert!(matches!(e.0, Fault::Memory(_)), "{:?}", e.0);
    let _ = Vm::new();
}

#[test]
fn tiled_offsets_match_amds_address_library() {
    use super::tiling::Tiling;
    let table = include_str!("addrlib_gfx9.txt");
    let (mut surfaces, mut texels) = (0, 0);
    let mut modes = std::collections::BTreeSet::new();
    for line in table.lines().filter(|l| l.starts_with("surface")) {
        let mut it = line.split_whitespace().skip(1);
        let mut num = || it.next().unwrap().parse::<u32>().unwrap();
        let (w, h, s, bytes, mode, pitch) = (num(), num(), num(), num(), num(), num());
        let want: Vec<u64> = line
            .split_whitespace()
            .skip(7)
            .map(|x| u64::from_str_radix(x, 16).unwrap())
            .collect();
        let t = Tiling::new(mode, bytes, pitch, h).unwrap();
        let mut k = 0;
        for z in 0..s {
            for y in 0..h {
                for x in 0..w {
                    if !((x < 4 && y < 4 && z == 0) || (x * 5 + y * 3 + z) % 17 == 0) {
                        continue;
                    }
                    assert_eq!(
                        t.offset(x, y, z),
                        want[k],
                        "{w}x{h}x{s} of {bytes}-byte elements, SW_MODE {mode}: texel ({x}, {y}, {z})"
                    );
                    k += 1;
                }
            }
        }
        assert_eq!(k, want.len(), "{line:.40}");
        surfaces += 1;
        texels += k;
        modes.insert(mode);
    }
    // Every 2D swizzle mode of GFX9 but the variable-size ones.
    assert_eq!(modes.len(), 23, "{modes:?}");
    assert!(
        surfaces > 100 && texels > 10000,
        "{surfaces} surfaces, {texels} texels"
    );
}
