//! The replacement entries, one module per API table. Each entry is made by
//! [`hook!`]: the C signature once, the body, and from them the hook, the
//! typed original and the slot offset.

pub mod amd;
pub mod core;
pub mod image;
pub mod loader;

/// Which copy of the runtime's original entries a table type reads.
pub trait Original: Sized + 'static {
    fn original() -> &'static Self;
}

impl Original for crate::abi::CoreApiTable {
    fn original() -> &'static Self {
        &crate::state().orig.core
    }
}
impl Original for crate::abi::AmdExtTable {
    fn original() -> &'static Self {
        &crate::state().orig.amd
    }
}
impl Original for crate::abi::ImageExtTable {
    fn original() -> &'static Self {
        &crate::state().orig.image
    }
}

/// `hook!(Table, fn slot(arg: Type, ...) { body })` defines module `slot`
/// with `Sig` (the C signature), `OFFSET` (the slot in `Table`), `orig()`
/// (ROCr's entry) and `hook` (the entry installed: the body under
/// [`crate::guard`], traced at `trace` level with its arguments and status).
macro_rules! hook {
    ($table:ident, fn $name:ident($($a:ident : $t:ty),* $(,)?) $body:block) => {
        #[allow(non_snake_case, unused_imports, clippy::too_many_arguments)]
        pub mod $name {
            use super::*;
            use $crate::abi::*;

            pub type Sig = unsafe extern "C" fn($($t),*) -> Status;
            pub const OFFSET: usize = ::core::mem::offset_of!($table, $name);

            /// ROCr's entry.
            pub fn orig() -> Sig {
                let fp = <$table as $crate::hooks::Original>::original().$name;
                // SAFETY: this slot of ROCr's table holds its entry of this signature
                // (hsa_api_trace.h); a hook is installed only over a non-null slot.
                unsafe { ::core::mem::transmute::<Fp, Option<Sig>>(fp) }
                    .expect(concat!(stringify!($name), ": no original entry"))
            }

            pub fn entry() -> (usize, Fp) {
                // SAFETY: a function pointer of the table's C signature stored as an untyped slot.
                (OFFSET, unsafe { ::core::mem::transmute::<Option<Sig>, Fp>(Some(hook as Sig)) })
            }

            /// # Safety
            /// Called by the application through ROCr's table, with that entry's contract.
            pub unsafe extern "C" fn hook($($a: $t),*) -> Status {
                $crate::guard(stringify!($name), || {
                    let traced = $crate::log::enabled($crate::log::Level::Trace);
                    if traced {
                        let args: Vec<String> = vec![$(format!("{}={:?}", stringify!($a), $a)),*];
                        $crate::log::write_line(
                            $crate::log::Level::Trace,
                            format_args!("{}({})", stringify!($name), args.join(", ")),
                        );
                    }
                    #[allow(unused_unsafe, clippy::redundant_closure_call)]
                    let status: Status = (|| $body)();
                    if traced {
                        $crate::log::write_line(
                            $crate::log::Level::Trace,
                            format_args!("{} -> {:#x}", stringify!($name), status),
                        );
                    }
                    status
                })
            }
        }
    };
}
pub(crate) use hook;

/// An agent the application passed, as the runtime must see it.
pub fn exec(agent: crate::abi::Agent) -> crate::abi::Agent {
    match crate::pair() {
        Some(p) => p.to_exec(agent),
        None => agent,
    }
}

/// An agent the runtime returned, as the application must see it.
pub fn public(agent: crate::abi::Agent) -> crate::abi::Agent {
    match crate::pair() {
        Some(p) => p.to_public(agent),
        None => agent,
    }
}

/// A list of agents the application passed (`n` entries at `agents`), mapped.
///
/// # Safety
/// `agents` is null or points to `n` readable agents.
pub unsafe fn exec_list(
    agents: *const crate::abi::Agent,
    n: usize,
) -> Option<Vec<crate::abi::Agent>> {
    if agents.is_null() {
        return None;
    }
    // SAFETY: `n` agents are readable at `agents` (caller).
    let list = unsafe { std::slice::from_raw_parts(agents, n) };
    Some(match crate::pair() {
        Some(p) => p.to_exec_all(list),
        None => list.to_vec(),
    })
}

/// A copy of the `n` entries the application passed at `p`, each changed
/// by `map` (None for a null `p`, which the caller forwards as it is).
///
/// # Safety
/// `p` is null or points to `n` readable entries.
pub unsafe fn mapped_copy<T: Copy>(
    p: *const T,
    n: usize,
    map: impl FnMut(&mut T),
) -> Option<Vec<T>> {
    if p.is_null() {
        return None;
    }
    // SAFETY: `n` entries are readable at `p` (caller).
    let mut list = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
    list.iter_mut().for_each(map);
    Some(list)
}

/// The pointer to pass on for a mapped list (null stays null).
pub fn list_ptr(list: &mut Option<Vec<crate::abi::Agent>>) -> *mut crate::abi::Agent {
    list.as_mut()
        .map_or(std::ptr::null_mut(), |v| v.as_mut_ptr())
}
