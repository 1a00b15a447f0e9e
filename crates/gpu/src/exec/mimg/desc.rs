//! The image resource (T#, 256 bits) and sampler (S#, 128 bits)
//! descriptors of GFX9, field by field (AMD's register headers for
//! `SQ_IMG_RSRC_WORD0..7` and `SQ_IMG_SAMP_WORD0..3`).
//!
//! T#: word 0 `BASE_ADDRESS` (address bits 39:8); word 1 `BASE_ADDRESS_HI`
//! \[7:0\] (address bits 47:40), `MIN_LOD` \[19:8\], `DATA_FORMAT` \[25:20\],
//! `NUM_FORMAT` \[29:26\]; word 2 `WIDTH` \[13:0\] and `HEIGHT` \[27:14\]
//! (each minus one); word 3 `DST_SEL_X/Y/Z/W` \[11:0\], `BASE_LEVEL`
//! \[15:12\], `LAST_LEVEL` \[19:16\], `SW_MODE` \[24:20\], `TYPE` \[31:28\];
//! word 4 `DEPTH` \[12:0\] (depth, or array size, minus one), `PITCH`
//! \[28:13\] (row pitch in elements, minus one), `BC_SWIZZLE` \[31:29\];
//! word 5 `BASE_ARRAY` \[12:0\], `MAX_MIP` \[31:28\].
//!
//! S#: word 0 `CLAMP_X/Y/Z` \[8:0\], `DEPTH_COMPARE_FUNC` \[14:12\],
//! `FORCE_UNNORMALIZED` \[15\]; word 1 `MIN_LOD` \[11:0\], `MAX_LOD`
//! \[23:12\] (unsigned 4.8 fixed point); word 2 `LOD_BIAS` \[13:0\] (signed
//! 6.8), `XY_MAG_FILTER` \[21:20\], `XY_MIN_FILTER` \[23:22\], `Z_FILTER`
//! \[25:24\], `MIP_FILTER` \[27:26\]; word 3 `BORDER_COLOR_PTR` \[11:0\],
//! `BORDER_COLOR_TYPE` \[31:30\].

use super::texel::Format;
use super::tiling::Tiling;
use crate::exec::op::Fault;

/// `TYPE` of an image resource.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    D1,
    D2,
    D3,
    Cube,
    D1Array,
    D2Array,
    D2Msaa,
    D2MsaaArray,
}

impl Dim {
    fn from_type(t: u32) -> Option<Dim> {
        Some(match t {
            8 => Dim::D1,
            9 => Dim::D2,
            10 => Dim::D3,
            11 => Dim::Cube,
            12 => Dim::D1Array,
            13 => Dim::D2Array,
            14 => Dim::D2Msaa,
            15 => Dim::D2MsaaArray,
            _ => return None,
        })
    }

    /// Coordinates that address a texel within one slice (x, y, z).
    pub fn coords(self) -> usize {
        match self {
            Dim::D1 | Dim::D1Array => 1,
            Dim::D3 => 3,
            _ => 2,
        }
    }

    /// Whether the last address component selects an array slice.
    pub fn arrayed(self) -> bool {
        matches!(self, Dim::D1Array | Dim::D2Array | Dim::D2MsaaArray)
    }

    pub fn name(self) -> &'static str {
        match self {
            Dim::D1 => "1D",
            Dim::D2 => "2D",
            Dim::D3 => "3D",
            Dim::Cube => "cube",
            Dim::D1Array => "1D array",
            Dim::D2Array => "2D array",
            Dim::D2Msaa => "2D MSAA",
            Dim::D2MsaaArray => "2D MSAA array",
        }
    }
}

/// The GFX9 swizzle modes' names (`SW_MODE`), for reports.
pub fn sw_mode_name(m: u32) -> &'static str {
    const NAMES: [&str; 32] = [
        "SW_LINEAR",
        "SW_256B_S",
        "SW_256B_D",
        "SW_256B_R",
        "SW_4KB_Z",
        "SW_4KB_S",
        "SW_4KB_D",
        "SW_4KB_R",
        "SW_64KB_Z",
        "SW_64KB_S",
        "SW_64KB_D",
        "SW_64KB_R",
        "SW_VAR_Z",
        "SW_VAR_S",
        "SW_VAR_D",
        "SW_VAR_R",
        "SW_64KB_Z_T",
        "SW_64KB_S_T",
        "SW_64KB_D_T",
        "SW_64KB_R_T",
        "SW_4KB_Z_X",
        "SW_4KB_S_X",
        "SW_4KB_D_X",
        "SW_4KB_R_X",
        "SW_64KB_Z_X",
        "SW_64KB_S_X",
        "SW_64KB_D_X",
        "SW_64KB_R_X",
        "SW_VAR_Z_X",
        "SW_VAR_S_X",
        "SW_VAR_D_X",
        "SW_VAR_R_X",
    ];
    NAMES[(m & 31) as usize]
}

/// A decoded image resource.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Tsharp {
    pub base: u64,
    pub format: Format,
    pub width: u32,
    pub height: u32,
    /// Depth of a 3D image, layers of an array (1 otherwise).
    pub depth: u32,
    /// Row pitch in elements.
    pub pitch: u32,
    pub dim: Dim,
    /// `DST_SEL_X..W`: 0 zero, 1 one, 4..7 the format's x..w.
    pub dst_sel: [u8; 4],
    pub base_level: u32,
    pub last_level: u32,
    pub sw_mode: u32,
    /// The layout of a tiled image (`None`: linear).
    pub tiling: Option<Tiling>,
    pub base_array: u32,
}

impl Tsharp {
    /// Decodes the eight dwords of a T#. Faults on a resource the emulator
    /// cannot access: not an image, an unsupported format, a cube or MSAA
    /// image, or a tiled layout other than those of 2D images.
    pub fn decode(w: [u32; 8]) -> Result<Tsharp, Fault> {
        let f = |word: usize, lo: u32, bits: u32| (w[word] >> lo) & ((1u32 << bits) - 1);
        let ty = f(3, 28, 4);
        let dim = Dim::from_type(ty).ok_or_else(|| {
            Fault::Invalid(format!(
                "the resource of an image instruction has TYPE {ty}, not an image (8-15): \
                 T# words {w:08x?}"
            ))
        })?;
        let format = Format::new(f(1, 20, 6), f(1, 26, 4))?;
        let sw_mode = f(3, 20, 5);
        if matches!(dim, Dim::D2Msaa | Dim::D2MsaaArray | Dim::Cube) {
            return Err(Fault::Invalid(format!(
                "{} images are not supported by the emulator (T# TYPE {ty})",
                dim.name()
            )));
        }
        let base = ((u64::from(f(1, 0, 8)) << 32) | u64::from(w[0])) << 8;
        let layered = dim == Dim::D3 || dim.arrayed();
        let height = if matches!(dim, Dim::D1 | Dim::D1Array) {
            1
        } else {
            f(2, 14, 14) + 1
        };
        let pitch = f(4, 13, 16) + 1;
        let tiling = match (sw_mode, dim) {
            (0, _) => None,
            (_, Dim::D2 | Dim::D2Array) => Some(Tiling::new(sw_mode, format.bytes, pitch, height)?),
            _ => {
                return Err(Fault::Invalid(format!(
                    "{} image with swizzle mode {} (SW_MODE {sw_mode}): the emulator addresses \
                     tiled 2D images and linear images of every dimension",
                    dim.name(),
                    sw_mode_name(sw_mode)
                )));
            }
        };
        Ok(Tsharp {
            base,
            format,
            width: f(2, 0, 14) + 1,
            height,
            depth: if layered { f(4, 0, 13) + 1 } else { 1 },
            pitch,
            tiling,
            dim,
            dst_sel: [
                f(3, 0, 3) as u8,
                f(3, 3, 3) as u8,
                f(3, 6, 3) as u8,
                f(3, 9, 3) as u8,
            ],
            base_level: f(3, 12, 4),
            last_level: f(3, 16, 4),
            sw_mode,
            base_array: f(5, 0, 13),
        })
    }

    /// Bytes from one array slice (or 3D depth slice) to the next, for
    /// linear images.
    pub fn slice_bytes(&self) -> u64 {
        u64::from(self.pitch) * u64::from(self.height) * u64::from(self.format.bytes)
    }

    /// The address of texel (x, y, z) of mip level 0 (`z` the depth slice
    /// or array layer), which must be in range: linear (rows `pitch`
    /// elements apart, slices `pitch * height`) or tiled ([`Tiling`]).
    pub fn texel_addr(&self, x: u32, y: u32, z: u32) -> u64 {
        if let Some(t) = &self.tiling {
            return self.base + t.offset(x, y, z);
        }
        let b = u64::from(self.format.bytes);
        self.base
            + u64::from(z) * self.slice_bytes()
            + u64::from(y) * u64::from(self.pitch) * b
            + u64::from(x) * b
    }

    /// Size in texels of mip level `level` along x, y, z (z: layers are not
    /// minified).
    pub fn level_size(&self, level: u32) -> [u32; 3] {
        let m = |v: u32| (v >> level.min(31)).max(1);
        [
            m(self.width),
            m(self.height),
            if self.dim == Dim::D3 {
                m(self.depth)
            } else {
                self.depth
            },
        ]
    }
}

/// `CLAMP_X/Y/Z` values.
pub mod clamp {
    pub const WRAP: u8 = 0;
    pub const MIRROR: u8 = 1;
    pub const CLAMP_LAST_TEXEL: u8 = 2;
    pub const MIRROR_ONCE_LAST_TEXEL: u8 = 3;
    pub const CLAMP_HALF_BORDER: u8 = 4;
    pub const MIRROR_ONCE_HALF_BORDER: u8 = 5;
    pub const CLAMP_BORDER: u8 = 6;
    pub const MIRROR_ONCE_BORDER: u8 = 7;
}

/// Filters (`XY_MAG_FILTER`, `XY_MIN_FILTER`; `Z_FILTER`, `MIP_FILTER`
/// use 0 none, 1 point, 2 linear).
pub mod filter {
    pub const POINT: u8 = 0;
    pub const BILINEAR: u8 = 1;
    pub const ANISO_POINT: u8 = 2;
    pub const ANISO_BILINEAR: u8 = 3;
}

/// A decoded sampler.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Ssharp {
    pub clamp: [u8; 3],
    pub compare_func: u8,
    pub force_unnormalized: bool,
    pub min_lod: f32,
    pub max_lod: f32,
    pub lod_bias: f32,
    pub mag_filter: u8,
    pub min_filter: u8,
    pub z_filter: u8,
    pub mip_filter: u8,
    /// The border colour (the predefined ones; a border colour table is
    /// refused at decode).
    pub border: [f32; 4],
    pub border_type: u8,
}

impl Ssharp {
    pub fn decode(w: [u32; 4]) -> Result<Ssharp, Fault> {
        let f = |word: usize, lo: u32, bits: u32| (w[word] >> lo) & ((1u32 << bits) - 1);
        let border_type = f(3, 30, 2) as u8;
        let border = match border_type {
            0 => [0.0; 4],
            1 => [0.0, 0.0, 0.0, 1.0],
            2 => [1.0; 4],
            _ => {
                return Err(Fault::Invalid(format!(
                    "sampler with BORDER_COLOR_TYPE 3 (a border colour table entry, \
                     BORDER_COLOR_PTR {}): the emulator supports the transparent black, \
                     opaque black and opaque white border colours only",
                    f(3, 0, 12)
                )));
            }
        };
        let lod_bias = ((f(2, 0, 14) << 18) as i32 >> 18) as f32 / 256.0;
        Ok(Ssharp {
            clamp: [f(0, 0, 3) as u8, f(0, 3, 3) as u8, f(0, 6, 3) as u8],
            compare_func: f(0, 12, 3) as u8,
            force_unnormalized: f(0, 15, 1) != 0,
            min_lod: f(1, 0, 12) as f32 / 256.0,
            max_lod: f(1, 12, 12) as f32 / 256.0,
            lod_bias,
            mag_filter: f(2, 20, 2) as u8,
            min_filter: f(2, 22, 2) as u8,
            z_filter: f(2, 24, 2) as u8,
            mip_filter: f(2, 26, 2) as u8,
            border,
            border_type,
        })
    }
}
