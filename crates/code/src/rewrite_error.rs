//! The error of the binary rewriters ([`dbt`](crate::dbt) and
//! [`dbi`](crate::dbi)): why a code object was not rewritten. When an
//! instruction is the cause, `kernel`, `pc` (byte offset in the kernel or
//! function) and `instruction` (LLVM syntax) name it.

use std::fmt;

/// Why a code object was not rewritten; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RewriteError {
    /// The rewriter that refused: `"dbt"` or `"dbi"` (the message's prefix).
    pub tool: &'static str,
    /// The kernel or function holding the instruction, or the kernel whose
    /// descriptor is the cause.
    pub kernel: Option<String>,
    /// Byte offset of the instruction in the kernel/function.
    pub pc: Option<u64>,
    /// Address of the instruction in the code object.
    pub address: Option<u64>,
    /// The instruction in LLVM syntax.
    pub instruction: Option<String>,
    /// What is wrong, and what would fix it where something would.
    pub message: String,
}

impl RewriteError {
    /// An error of `tool` that names no instruction.
    pub(crate) fn new(tool: &'static str, message: impl Into<String>) -> RewriteError {
        RewriteError {
            tool,
            kernel: None,
            pc: None,
            address: None,
            instruction: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for RewriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.tool)?;
        if let Some(k) = &self.kernel {
            write!(f, "{k}")?;
            if let Some(pc) = self.pc {
                write!(f, "+0x{pc:x}")?;
            }
            write!(f, ": ")?;
        } else if let Some(a) = self.address {
            write!(f, "address 0x{a:x}: ")?;
        }
        if let Some(i) = &self.instruction {
            write!(f, "`{i}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for RewriteError {}
