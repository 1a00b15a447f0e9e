//! The `memtrace` tool: for chosen GLOBAL and FLAT instructions, the
//! address of every active lane on every Nth execution (per wave) of each.
//!
//! The buffer holds a 64-bit execution counter per traced instruction, a
//! record counter, and then records of [`RECORD_BYTES`]: a header (the
//! site's index and the execution's serial number, EXEC, and for the
//! `saddr` form the SGPR base) and a slot of 8 bytes per lane, into which
//! each active lane stores its address register (the 64-bit VGPR pair, or
//! for the `saddr` form the 32-bit VGPR offset). The host adds the base
//! and the instruction's offset ([`decode`]), which is how the hardware
//! forms the address. Lanes outside EXEC store nothing, as they access
//! nothing.
//!
//! The probe, before the traced instruction:
//! ```text
//! s_getpc_b64 s[p:p+1]                          ; P
//! s_mov_b32 sN, 1
//! s_atomic_add sN, s[p:p+1], counter - P glc    ; the serial number
//! s_waitcnt lgkmcnt(0)
//! s_and_b32 sT, sN, every - 1 ; s_cmp_eq_u32 sT, 0 ; s_cbranch_scc0 skip
//! s_mov_b32 sT, 1
//! s_atomic_add sT, s[p:p+1], records - P glc     ; the record's index
//! s_waitcnt lgkmcnt(0)
//! s_cmp_lt_u32 sT, capacity ; s_cbranch_scc0 skip
//! s[p:p+1] += sT * RECORD_BYTES + (first record - P)
//! header: s_store_dwordx2 (site, serial), (EXEC), (saddr base) ; s_dcache_wb
//! vL = lane id * 8 ; s_nop 1
//! global_store_dword[x2] vL, v[addr], s[p:p+1] offset:32 ; s_waitcnt vmcnt(0)
//! skip:
//! ```
//! It writes SCC (saved by the caller where live), two SGPR pairs, two
//! SGPRs and one VGPR that liveness shows dead there.

use super::{Probe, Scratch, enc};
use crate::cfg::Cfg;
use rocjitsu_isa::Instruction;
use rocjitsu_isa::gfx9::Body;

/// Bytes of one record: a 32-byte header and 8 bytes per lane.
pub const RECORD_BYTES: u64 = 32 + 64 * 8;

/// Which instructions to trace and how often.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Code object addresses of instructions to trace.
    pub pcs: Vec<u64>,
    /// Mnemonic prefixes (`global_load`, `flat_store_dword`, ...).
    pub mnemonics: Vec<String>,
    /// Record every Nth execution of each (a power of two).
    pub every: u32,
    /// Records in the buffer.
    pub records: u32,
}

/// One traced instruction.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TracedSite {
    pub address: u64,
    pub function: String,
    pub instruction: String,
    /// The `saddr` form: address = SGPR base + 32-bit VGPR + offset.
    pub saddr: bool,
    /// The instruction's offset, sign-extended where the encoding signs it.
    pub offset: i64,
}

/// The buffer's layout and the traced instructions.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    pub sites: Vec<TracedSite>,
    pub every: u32,
    pub records: u32,
    /// Offsets in the buffer: the record counter, the first record.
    pub record_counter: u64,
    pub first_record: u64,
    pub record_bytes: u64,
}

impl Layout {
    pub fn bytes(&self) -> u64 {
        self.first_record + u64::from(self.records) * self.record_bytes
    }
}

pub(crate) type Planned = (Layout, Vec<(usize, Box<dyn Probe>)>);

/// The traced sites of `cfg` and their probes; an error names the site
/// (index in `cfg.sites`) when one is the cause.
pub(crate) fn plan(cfg: &Cfg, o: &Options) -> Result<Planned, (Option<usize>, String)> {
    let mut chosen: Vec<usize> = Vec::new();
    for &pc in &o.pcs {
        let k = cfg.site_at(pc).ok_or_else(|| {
            (
                None,
                format!(
                    "--pc 0x{pc:x}: no reachable instruction starts there (see `rocjitsu cfg` for the addresses)"
                ),
            )
        })?;
        if !traceable(&cfg.sites[k].inst) {
            return Err((
                Some(k),
                "memtrace traces GLOBAL and FLAT instructions; this one is neither".into(),
            ));
        }
        chosen.push(k);
    }
    for (k, s) in cfg.sites.iter().enumerate() {
        let m = s.inst.mnemonic();
        if traceable(&s.inst) && o.mnemonics.iter().any(|p| m.starts_with(p.as_str())) {
            chosen.push(k);
        }
    }
    chosen.sort_unstable();
    chosen.dedup();
    if chosen.is_empty() {
        return Err((
            None,
            format!(
                "no GLOBAL or FLAT instruction matches --mnemonic {}",
                o.mnemonics.join(", ")
            ),
        ));
    }
    let mut sites = Vec::new();
    let mut probes: Vec<(usize, Box<dyn Probe>)> = Vec::new();
    let record_counter = 8 * chosen.len() as u64;
    let first_record = (record_counter + 8).div_ceil(64) * 64;
    for (i, &k) in chosen.iter().enumerate() {
        let s = &cfg.sites[k];
        let Instruction::Gfx9(inst) = s.inst else {
            return Err((Some(k), "not a GFX9 instruction".into()));
        };
        let Body::Flat(f) = inst.body() else {
            return Err((Some(k), "not a FLAT-encoded instruction".into()));
        };
        let saddr = f.seg == 2 && f.saddr != 0x7f;
        let offset = if f.seg == 0 {
            i64::from(f.offset & 0xfff)
        } else {
            i64::from(((f.offset as i16) << 3) >> 3)
        };
        let function = super::owner(cfg, k)
            .map(|f| f.name.clone())
            .unwrap_or_default();
        sites.push(TracedSite {
            address: s.address,
            function,
            instruction: s.inst.to_string(),
            saddr,
            offset,
        });
        probes.push((
            k,
            Box::new(Trace {
                site: i as u32,
                addr: u32::from(f.addr),
                saddr: saddr.then_some(u32::from(f.saddr)),
                counter: 8 * i as u64,
                record_counter,
                first_record,
                every: o.every,
                records: o.records,
            }),
        ));
    }
    Ok((
        Layout {
            sites,
            every: o.every,
            records: o.records,
            record_counter,
            first_record,
            record_bytes: RECORD_BYTES,
        },
        probes,
    ))
}

fn traceable(inst: &Instruction) -> bool {
    let m = inst.mnemonic();
    matches!(inst, Instruction::Gfx9(_)) && (m.starts_with("global_") || m.starts_with("flat_"))
}

struct Trace {
    site: u32,
    addr: u32,
    saddr: Option<u32>,
    counter: u64,
    record_counter: u64,
    first_record: u64,
    every: u32,
    records: u32,
}

impl Probe for Trace {
    fn sgprs(&self) -> (usize, usize) {
        (2, 2)
    }
    fn vgprs(&self) -> usize {
        1
    }
    fn writes_scc(&self) -> bool {
        true
    }
    fn emit(&self, at: u64, buffer: u64, r: &Scratch) -> Result<Vec<u32>, String> {
        use enc::{LITERAL, int, smem, sop1, sop2, sopc};
        let (p, q) = (r.pairs[0], r.pairs[1]);
        let (n, t) = (r.singles[0], r.singles[1]);
        let l = r.vgprs[0];
        let pc = (at + 4) as i64;
        let off = |o: u64| -> Result<i32, String> {
            let d = (buffer + o) as i64 - pc;
            if enc::smem_offset_fits(d) {
                Ok(d as i32)
            } else {
                Err(format!(
                    "the buffer is {d} bytes from the probe, out of the SMEM offset's 1 MiB range"
                ))
            }
        };
        let mut w = vec![sop1(sop1::GETPC_B64, p, 0), sop1(sop1::MOV_B32, n, int(1))];
        w.extend(smem(smem::ATOMIC_ADD, n, p, off(self.counter)?, true));
        w.push(enc::S_WAITCNT_LGKM0);
        w.extend(sconst(self.every - 1, |c| sop2(sop2::AND_B32, t, n, c)));
        w.push(sopc(sopc::CMP_EQ_U32, t, int(0)));
        let skip1 = w.len();
        w.push(0);
        w.push(sop1(sop1::MOV_B32, t, int(1)));
        w.extend(smem(
            smem::ATOMIC_ADD,
            t,
            p,
            off(self.record_counter)?,
            true,
        ));
        w.push(enc::S_WAITCNT_LGKM0);
        w.extend(sconst(self.records, |c| sopc(sopc::CMP_LT_U32, t, c)));
        let skip2 = w.len();
        w.push(0);
        w.extend([sop2(sop2::MUL_I32, t, t, LITERAL), RECORD_BYTES as u32]);
        w.push(sop2(sop2::ADD_U32, p, p, t));
        w.push(sop2(sop2::ADDC_U32, p + 1, p + 1, int(0)));
        let delta = (buffer + self.first_record).wrapping_sub(pc as u64);
        w.extend([sop2(sop2::ADD_U32, p, p, LITERAL), delta as u32]);
        w.extend([
            sop2(sop2::ADDC_U32, p + 1, p + 1, LITERAL),
            (delta >> 32) as u32,
        ]);
        // Header: (site, serial), EXEC, the saddr base.
        w.extend([sop1(sop1::MOV_B32, q, LITERAL), self.site]);
        w.push(sop1(sop1::MOV_B32, q + 1, n));
        w.extend(smem(smem::STORE_DWORDX2, q, p, 0, false));
        w.push(sop1(sop1::MOV_B64, q, enc::EXEC));
        w.extend(smem(smem::STORE_DWORDX2, q, p, 8, false));
        if let Some(s) = self.saddr {
            w.extend(smem(smem::STORE_DWORDX2, s, p, 16, false));
        }
        w.push(S_DCACHE_WB[0]);
        w.push(S_DCACHE_WB[1]);
        w.extend(enc::lane_id(l));
        w.push(enc::v_lshlrev_b32(l, 3, l));
        w.push(crate::dbt::enc::s_nop(1));
        let op = if self.saddr.is_some() {
            enc::global::STORE_DWORD
        } else {
            enc::global::STORE_DWORDX2
        };
        w.extend(enc::global_store(op, l, self.addr, p, 32));
        w.push(enc::S_WAITCNT_VM0);
        let end = w.len();
        for at in [skip1, skip2] {
            w[at] = enc::s_cbranch_scc0((end - at - 1) as i16);
        }
        Ok(w)
    }
}

/// An instruction taking the constant `v` as its last source: an inline
/// constant where one fits, else a literal.
fn sconst(v: u32, f: impl Fn(u32) -> u32) -> Vec<u32> {
    if v <= 64 {
        vec![f(enc::int(v as i32))]
    } else {
        vec![f(enc::LITERAL), v]
    }
}

/// `s_dcache_wb` (SMEM opcode 33): the header's scalar stores reach
/// memory.
pub(crate) const S_DCACHE_WB: [u32; 2] = [0xc084_0000, 0];

/// The buffer's contents as JSON: per site its executions, and every
/// record with the address of each active lane.
pub fn decode(l: &Layout, buf: &[u8]) -> serde_json::Value {
    let u32_at = |o: u64| -> u32 {
        let o = o as usize;
        buf.get(o..o + 4)
            .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
    };
    let u64_at = |o: u64| u64::from(u32_at(o)) | u64::from(u32_at(o + 4)) << 32;
    let sites: Vec<serde_json::Value> = l
        .sites
        .iter()
        .enumerate()
        .map(|(i, s)| {
            serde_json::json!({
                "index": i, "address": s.address, "function": s.function,
                "instruction": s.instruction, "executions": u32_at(8 * i as u64),
            })
        })
        .collect();
    let taken = u32_at(l.record_counter);
    let n = taken.min(l.records);
    let mut records = Vec::new();
    for r in 0..u64::from(n) {
        let at = l.first_record + r * l.record_bytes;
        let site = u32_at(at);
        let serial = u32_at(at + 4);
        let exec = u64_at(at + 8);
        let base = u64_at(at + 16);
        let Some(s) = l.sites.get(site as usize) else {
            continue;
        };
        let mut addresses = Vec::new();
        for lane in 0..64u64 {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let slot = at + 32 + 8 * lane;
            let a = if s.saddr {
                base.wrapping_add(u64::from(u32_at(slot)))
            } else {
                u64_at(slot)
            }
            .wrapping_add(s.offset as u64);
            addresses.push(serde_json::json!([lane, a]));
        }
        records.push(serde_json::json!({
            "site": site, "serial": serial, "exec": exec, "addresses": addresses,
        }));
    }
    serde_json::json!({
        "tool": "memtrace", "sites": sites, "records": records,
        "dropped": taken.saturating_sub(l.records), "every": l.every,
    })
}
