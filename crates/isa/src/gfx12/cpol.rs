//! GFX12's cache-policy fields as LLVM prints them: the temporal hint `th`
//! (read by the kind of access: load, store or atomic) and the `scope`.
//! RDNA4 ISA manual, "Memory Scope and Temporal Hints".

use std::fmt;

/// How a `th` value reads: the kind of access the opcode makes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ThKind {
    Load,
    Store,
    Atomic,
}

/// The scope printed for a scope field value.
pub const SCOPES: [&str; 4] = ["", "SCOPE_SE", "SCOPE_DEV", "SCOPE_SYS"];

/// Prints ` th:...` (nothing for 0) and ` scope:...` (nothing for the CU
/// scope, 0) as LLVM 22 does.
pub fn fmt_th_scope(f: &mut fmt::Formatter<'_>, kind: ThKind, th: u8, scope: u8) -> fmt::Result {
    const SYS: u8 = 3;
    if th != 0 {
        f.write_str(" th:")?;
        match kind {
            ThKind::Atomic => {
                f.write_str("TH_ATOMIC_")?;
                let (ret, nt, cascade) = (th & 1 != 0, th & 2 != 0, th & 4 != 0);
                if cascade {
                    if scope >= 2 {
                        f.write_str(if nt { "CASCADE_NT" } else { "CASCADE_RT" })?;
                    } else {
                        write!(f, "0x{th:x}")?;
                    }
                } else if nt {
                    f.write_str(if ret { "NT_RETURN" } else { "NT" })?;
                } else if ret {
                    f.write_str("RETURN")?;
                } else {
                    write!(f, "0x{th:x}")?;
                }
            }
            ThKind::Load if th == 7 => write!(f, "0x{th:x}")?,
            ThKind::Load | ThKind::Store => {
                let store = kind == ThKind::Store;
                f.write_str(if store { "TH_STORE_" } else { "TH_LOAD_" })?;
                f.write_str(match th {
                    1 => "NT",
                    2 => "HT",
                    3 if scope == SYS => "BYPASS",
                    3 if store => "WB",
                    3 => "LU",
                    4 => "NT_RT",
                    5 => "RT_NT",
                    6 => "NT_HT",
                    _ => "NT_WB",
                })?;
            }
        }
    }
    if scope != 0 {
        write!(f, " scope:{}", SCOPES[usize::from(scope & 3)])?;
    }
    Ok(())
}
