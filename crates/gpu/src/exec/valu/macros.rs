//! Macros that define lane-wise semantic functions from an expression.

/// `lanes32!(name, |a, b, c| expr)`: reads the sources as raw 32-bit lanes
/// (as many as the closure names), evaluates `expr` per lane, writes a
/// 32-bit result.
macro_rules! lanes32 {
    ($name:ident, |$a:ident| $e:expr) => {
        pub fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let s0 = b32(c, op, 0);
            let r: Lanes = std::array::from_fn(|l| {
                let $a = s0[l];
                $e
            });
            write_b32(c, op, &r);
            Ok(())
        }
    };
    ($name:ident, |$a:ident, $b:ident| $e:expr) => {
        pub fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let s0 = b32(c, op, 0);
            let s1 = b32(c, op, 1);
            let r: Lanes = std::array::from_fn(|l| {
                let ($a, $b) = (s0[l], s1[l]);
                $e
            });
            write_b32(c, op, &r);
            Ok(())
        }
    };
    ($name:ident, |$a:ident, $b:ident, $d:ident| $e:expr) => {
        pub fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let s0 = b32(c, op, 0);
            let s1 = b32(c, op, 1);
            let s2 = b32(c, op, 2);
            let r: Lanes = std::array::from_fn(|l| {
                let ($a, $b, $d) = (s0[l], s1[l], s2[l]);
                $e
            });
            write_b32(c, op, &r);
            Ok(())
        }
    };
}

/// `lanes_f32!(name, |a, b, c| expr)`: f32 sources with abs/neg, f32
/// result with omod/clamp.
macro_rules! lanes_f32 {
    ($name:ident, |$a:ident| $e:expr) => {
        pub fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let s0 = f32s(c, op, 0);
            let r: [f32; 64] = std::array::from_fn(|l| {
                let $a = s0[l];
                $e
            });
            write_f32(c, op, &r);
            Ok(())
        }
    };
    ($name:ident, |$a:ident, $b:ident| $e:expr) => {
        pub fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let s0 = f32s(c, op, 0);
            let s1 = f32s(c, op, 1);
            let r: [f32; 64] = std::array::from_fn(|l| {
                let ($a, $b) = (s0[l], s1[l]);
                $e
            });
            write_f32(c, op, &r);
            Ok(())
        }
    };
    ($name:ident, |$a:ident, $b:ident, $d:ident| $e:expr) => {
        pub fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let s0 = f32s(c, op, 0);
            let s1 = f32s(c, op, 1);
            let s2 = f32s(c, op, 2);
            let r: [f32; 64] = std::array::from_fn(|l| {
                let ($a, $b, $d) = (s0[l], s1[l], s2[l]);
                $e
            });
            write_f32(c, op, &r);
            Ok(())
        }
    };
}
