//! Scalar memory tests: loads, stores, buffer range checks and atomics
//! against a Vm buffer whose contents the test chooses, faults, and the
//! time counters.

use crate::exec::op::Fault;
use crate::exec::scalar::tests::{Code, assemble_each, values32, values64};
use crate::exec::testing::CODE_BASE;
use crate::exec::wave::Wave;
use crate::mem::{Access, Perms, Vm};
use rocjitsu_isa::Target;

const T: Target = Target::Gfx942;

/// A 256-byte buffer holding dword `i` = `0x1000_0000 + i * 0x01010101`.
fn buffer(vm: &Vm) -> u64 {
    let a = vm.alloc(256, Perms::RW);
    let bytes: Vec<u8> = (0..64u32)
        .flat_map(|i| (0x1000_0000u32.wrapping_add(i.wrapping_mul(0x0101_0101))).to_le_bytes())
        .collect();
    vm.fill(a, &bytes).unwrap();
    a
}

fn word(i: u64) -> u32 {
    0x1000_0000u32.wrapping_add((i as u32).wrapping_mul(0x0101_0101))
}

#[test]
fn s_load_reads_n_dwords_at_base_plus_offsets() {
    let sizes = [(1, ""), (2, "x2"), (4, "x4"), (8, "x8"), (16, "x16")];
    let mut lines = Vec::new();
    for (n, sfx) in sizes {
        let d = if n == 1 {
            "s20".to_string()
        } else {
            format!("s[20:{}]", 19 + n)
        };
        lines.push(format!("s_load_dword{sfx} {d}, s[2:3], 0x10"));
        lines.push(format!("s_load_dword{sfx} {d}, s[2:3], s4"));
        lines.push(format!("s_load_dword{sfx} {d}, s[2:3], s4 offset:0x8"));
        lines.push(format!("s_load_dword{sfx} {d}, s[2:3], -0x8"));
    }
    let codes = assemble_each(T, &lines);
    let mut it = codes.iter();
    for (n, _) in sizes {
        // (immediate offset, SGPR offset, base adjustment)
        let forms: [(i64, Option<u32>); 4] =
            [(0x10, None), (0, Some(0x23)), (8, Some(0x13)), (-8, None)];
        for (imm, soff) in forms {
            let code = Code::new(T, it.next().expect("assembled"));
            let vm = Vm::new();
            let a = buffer(&vm);
            // A negative offset needs a base inside the buffer.
            let base = if imm < 0 { a + 0x40 } else { a };
            let w = code
                .run_vm(&vm, |w| {
                    w.set_s64(2, base);
                    w.s[4] = soff.unwrap_or(0);
                })
                .unwrap();
            // The two low bits of the address are ignored.
            let addr = (base as i64 + imm + i64::from(soff.unwrap_or(0))) as u64 & !3;
            let first = (addr - a) / 4;
            for i in 0..n {
                assert_eq!(
                    w.s[20 + i],
                    word(first + i as u64),
                    "x{n} imm {imm} soff {soff:?} dword {i}"
                );
            }
            assert_eq!(w.s[20 + n], 0, "x{n}: nothing past the data");
        }
    }
}

#[test]
fn s_load_from_unmapped_memory_faults_with_address_and_pc() {
    let vm = Vm::new();
    let a = buffer(&vm);
    let code = Code::asm(T, "s_nop 0\ns_load_dwordx4 s[4:7], s[2:3], 0xff8");
    // 0xff8 + 16 runs past the buffer's (4 KiB) page into the guard gap.
    let (f, pc) = code.run_vm(&vm, |w| w.set_s64(2, a)).expect_err("fault");
    assert_eq!(pc, CODE_BASE + 4);
    match f {
        Fault::Memory(m) => {
            assert_eq!(m.access, Access::Read);
            assert!(m.addr >= a + 0xff8 && m.addr <= a + 0x1000, "{m:?}");
        }
        f => panic!("unexpected {f:?}"),
    }
    let (f, _) = code.run_vm(&vm, |w| w.set_s64(2, 0x10)).expect_err("fault");
    assert!(
        matches!(&f, Fault::Memory(m) if m.addr == 0x10 + 0xff8),
        "{f:?}"
    );
}

/// A buffer resource for `base` with `num_records` bytes in s[8:11].
fn resource(w: &mut Wave, base: u64, num_records: u32) {
    w.s[8] = base as u32;
    w.s[9] = (base >> 32) as u32 & 0xffff;
    w.s[10] = num_records;
    w.s[11] = 0x0002_7000;
}

#[test]
fn s_buffer_load_returns_zero_past_num_records() {
    let code = Code::asm(T, "s_buffer_load_dwordx8 s[20:27], s[8:11], s4");
    for num in [0u32, 3, 4, 12, 13, 31, 32, 40, 256] {
        for off in [0u32, 4, 8, 0x11, 28, 64] {
            let vm = Vm::new();
            let a = buffer(&vm);
            let w = code
                .run_vm(&vm, |w| {
                    resource(w, a, num);
                    w.s[4] = off;
                    for i in 20..28 {
                        w.s[i] = 0xdead;
                    }
                })
                .unwrap();
            let start = u64::from(off & !3);
            for i in 0..8u64 {
                let b = start + 4 * i;
                let want = if b + 4 <= u64::from(num) {
                    word(b / 4)
                } else {
                    0
                };
                assert_eq!(w.s[20 + i as usize], want, "num {num} off {off} dword {i}");
            }
        }
    }
}

#[test]
fn s_store_and_s_buffer_store_write_memory() {
    let vm = Vm::new();
    let a = buffer(&vm);
    let code = Code::asm(
        T,
        "s_store_dwordx4 s[20:23], s[2:3], 0x20\n\
         s_store_dword s24, s[2:3], s4\n\
         s_buffer_store_dwordx4 s[20:23], s[8:11], 0x80\n\
         s_buffer_store_dwordx2 s[20:21], s[8:11], 0x8c\n\
         s_dcache_wb",
    );
    code.run_vm(&vm, |w| {
        w.set_s64(2, a);
        w.s[4] = 0x41; // low bits ignored: dword at 0x40
        resource(w, a, 0x88);
        for i in 0..5 {
            w.s[20 + i] = 0xa000_0000 + i as u32;
        }
    })
    .unwrap();
    let out = vm.read_vec(a, 256).unwrap();
    let got = |i: usize| u32::from_le_bytes(out[i * 4..i * 4 + 4].try_into().unwrap());
    for i in 0..64 {
        let want = match i {
            8..=11 => 0xa000_0000 + (i as u32 - 8),
            16 => 0xa000_0004,
            // Buffer store at 0x80: dwords 32, 33 lie below num_records
            // (0x88); 34, 35 are dropped. The store at 0x8c is all out.
            32 | 33 => 0xa000_0000 + (i as u32 - 32),
            _ => word(i as u64),
        };
        assert_eq!(got(i), want, "dword {i}");
    }
}

#[test]
fn s_store_to_read_only_memory_faults() {
    let vm = Vm::new();
    let a = vm.alloc(64, Perms::RO);
    let (f, _) = Code::asm(T, "s_store_dword s0, s[2:3], 0x4")
        .run_vm(&vm, |w| w.set_s64(2, a))
        .expect_err("read-only");
    assert!(
        matches!(&f, Fault::Memory(m) if m.access == Access::Write && m.addr == a + 4),
        "{f:?}"
    );
}

type Atom32 = fn(u32, u32) -> u32;

#[test]
fn scalar_atomics_32_match_reference() {
    let ops: &[(&str, Atom32)] = &[
        ("swap", |_, d| d),
        ("add", |m, d| {
            ((u64::from(m) + u64::from(d)) % (1 << 32)) as u32
        }),
        ("sub", |m, d| {
            ((i64::from(m) - i64::from(d)).rem_euclid(1 << 32)) as u32
        }),
        ("smin", |m, d| if (m as i32) < (d as i32) { m } else { d }),
        ("umin", |m, d| if m < d { m } else { d }),
        ("smax", |m, d| if (m as i32) > (d as i32) { m } else { d }),
        ("umax", |m, d| if m > d { m } else { d }),
        ("and", |m, d| m & d),
        ("or", |m, d| m | d),
        ("xor", |m, d| m ^ d),
        ("inc", |m, d| if m >= d { 0 } else { m + 1 }),
        ("dec", |m, d| if m == 0 || m > d { d } else { m - 1 }),
    ];
    let mut lines = Vec::new();
    for (n, _) in ops {
        lines.push(format!("s_atomic_{n} s0, s[2:3], 0x8 glc"));
        lines.push(format!("s_atomic_{n} s0, s[2:3], 0x8"));
        lines.push(format!("s_buffer_atomic_{n} s0, s[8:11], 0x8 glc"));
    }
    let codes = assemble_each(T, &lines);
    let vals = values32();
    for (k, (name, reference)) in ops.iter().enumerate() {
        for (form, bytes) in codes[3 * k..3 * k + 3].iter().enumerate() {
            let code = Code::new(T, bytes);
            for &m in vals.iter().step_by(3) {
                for &d in &vals {
                    let vm = Vm::new();
                    let a = vm.alloc(16, Perms::RW);
                    vm.fill(a + 8, &m.to_le_bytes()).unwrap();
                    let w = code
                        .run_vm(&vm, |w| {
                            w.s[0] = d;
                            w.set_s64(2, a);
                            resource(w, a, 16);
                        })
                        .unwrap();
                    let mem =
                        u32::from_le_bytes(vm.read_vec(a + 8, 4).unwrap().try_into().unwrap());
                    let what = format!("{name} form {form} mem {m:#x} data {d:#x}");
                    assert_eq!(mem, reference(m, d), "{what}: memory");
                    // GLC returns the old value; without it s0 keeps the data.
                    assert_eq!(w.s[0], if form == 1 { d } else { m }, "{what}: s0");
                }
            }
        }
    }
}

#[test]
fn scalar_atomics_cmpswap_and_64bit() {
    let code = Code::asm(
        T,
        "s_atomic_cmpswap s[0:1], s[2:3], 0x0 glc\n\
         s_atomic_cmpswap_x2 s[4:7], s[2:3], 0x8 glc\n\
         s_atomic_add_x2 s[12:13], s[2:3], 0x10 glc\n\
         s_atomic_umax_x2 s[14:15], s[2:3], 0x18\n\
         s_buffer_atomic_add s16, s[8:11], 0x20 glc",
    );
    for &x in &values64() {
        for &y in values64().iter().step_by(2) {
            for equal in [false, true] {
                let vm = Vm::new();
                let a = vm.alloc(64, Perms::RW);
                let m32 = x as u32;
                vm.fill(a, &m32.to_le_bytes()).unwrap();
                vm.fill(a + 8, &x.to_le_bytes()).unwrap();
                vm.fill(a + 16, &x.to_le_bytes()).unwrap();
                vm.fill(a + 24, &x.to_le_bytes()).unwrap();
                let cmp32 = if equal { m32 } else { m32 ^ 1 };
                let cmp64 = if equal { x } else { x ^ (1 << 40) };
                let w = code
                    .run_vm(&vm, |w| {
                        w.s[0] = y as u32;
                        w.s[1] = cmp32;
                        w.set_s64(4, y);
                        w.set_s64(6, cmp64);
                        w.set_s64(12, y);
                        w.set_s64(14, y);
                        w.s[16] = 5;
                        w.set_s64(2, a);
                        // The buffer ends at 0x20: the buffer atomic is out
                        // of range, changes nothing and returns 0.
                        resource(w, a, 0x20);
                    })
                    .unwrap();
                let mem = vm.read_vec(a, 40).unwrap();
                let q = |o: usize| u64::from_le_bytes(mem[o..o + 8].try_into().unwrap());
                let d = |o: usize| u32::from_le_bytes(mem[o..o + 4].try_into().unwrap());
                assert_eq!(
                    d(0),
                    if equal { y as u32 } else { m32 },
                    "cmpswap {x:#x} {y:#x}"
                );
                assert_eq!(w.s[0], m32, "cmpswap returns the old value");
                assert_eq!(q(8), if equal { y } else { x }, "cmpswap_x2");
                assert_eq!(w.s64(4), x, "cmpswap_x2 returns the old value");
                assert_eq!(q(16), x.wrapping_add(y), "add_x2");
                assert_eq!(w.s64(12), x, "add_x2 returns the old value");
                assert_eq!(q(24), x.max(y), "umax_x2");
                assert_eq!(w.s64(14), y, "no glc: data kept");
                assert_eq!((d(32), w.s[16]), (0, 0), "out-of-range buffer atomic");
            }
        }
    }
}

#[test]
fn memtime_and_memrealtime_are_monotonic() {
    let code = Code::asm(
        T,
        "s_memtime s[0:1]\n\
         s_memrealtime s[2:3]\n\
         s_sleep 1\n\
         s_memtime s[4:5]\n\
         s_memrealtime s[6:7]\n\
         s_dcache_inv\n\
         s_dcache_inv_vol\n\
         s_dcache_wb_vol",
    );
    // Clock reads differ between runs: the interpreter only.
    let w = code.run_vm(&Vm::new(), |_| {}).unwrap();
    assert!(w.s64(4) >= w.s64(0));
    assert!(w.s64(6) >= w.s64(2));
    assert!(w.s64(4) > 0, "the clock advances from the epoch");
}
