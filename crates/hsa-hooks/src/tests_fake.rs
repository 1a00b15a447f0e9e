//! OnLoad against a fake runtime table: the installed entries shadow, map
//! and redirect as the rules say (a real ROCr is exercised by
//! scripts/dbt_hooks_test.sh).

use std::ffi::c_void;
use std::sync::Mutex;

use crate::abi::*;

const CPU: u64 = 0x100;
const HOST: u64 = 0x200;
const GUEST: u64 = 0x300;

/// What the fake runtime was called with: (entry, agent).
static CALLS: Mutex<Vec<(&'static str, u64)>> = Mutex::new(Vec::new());

fn record(what: &'static str, agent: Agent) {
    CALLS.lock().unwrap().push((what, agent.handle));
}

unsafe extern "C" fn fake_iterate(
    cb: Option<unsafe extern "C" fn(Agent, *mut c_void) -> Status>,
    data: *mut c_void,
) -> Status {
    for h in [CPU, HOST, GUEST] {
        // SAFETY: the caller's callback and data.
        let s = unsafe { cb.unwrap()(Agent { handle: h }, data) };
        if s != HSA_STATUS_SUCCESS {
            return s;
        }
    }
    HSA_STATUS_SUCCESS
}

unsafe extern "C" fn fake_get_info(agent: Agent, attribute: u32, value: *mut c_void) -> Status {
    record("get_info", agent);
    // SAFETY: the caller passes a buffer of the attribute's size.
    unsafe {
        match attribute {
            HSA_AGENT_INFO_DEVICE => *value.cast::<u32>() = u32::from(agent.handle != CPU),
            HSA_AGENT_INFO_NAME => {
                let name: &[u8] = match agent.handle {
                    HOST => b"gfx942\0",
                    GUEST => b"gfx950\0",
                    _ => b"cpu\0",
                };
                std::ptr::copy_nonoverlapping(name.as_ptr(), value.cast::<u8>(), name.len());
            }
            HSA_AMD_AGENT_INFO_DRIVER_NODE_ID => {
                *value.cast::<u32>() = (agent.handle / 0x100 - 1) as u32
            }
            _ => *value.cast::<u64>() = agent.handle,
        }
    }
    HSA_STATUS_SUCCESS
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn fake_queue_create(
    agent: Agent,
    _: u32,
    _: u32,
    _: Option<unsafe extern "C" fn(Status, *mut Queue, *mut c_void)>,
    _: *mut c_void,
    _: u32,
    _: u32,
    _: *mut *mut Queue,
) -> Status {
    record("queue_create", agent);
    HSA_STATUS_SUCCESS
}

unsafe extern "C" fn fake_allow_access(
    n: u32,
    agents: *const Agent,
    _: *const u32,
    _: *const c_void,
) -> Status {
    // SAFETY: the hook passes `n` agents.
    for a in unsafe { std::slice::from_raw_parts(agents, n as usize) } {
        record("allow_access", *a);
    }
    HSA_STATUS_SUCCESS
}

unsafe extern "C" fn fake_pointer_info(
    _: *const c_void,
    info: *mut PointerInfo,
    _: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    n: *mut u32,
    list: *mut *mut Agent,
) -> Status {
    // SAFETY: the test passes valid out pointers; the list is leaked on purpose.
    unsafe {
        (*info).agent_owner = Agent { handle: HOST };
        *n = 2;
        *list = Box::leak(Box::new([Agent { handle: CPU }, Agent { handle: HOST }])).as_mut_ptr();
    }
    HSA_STATUS_SUCCESS
}

fn fp<T: Copy>(f: T) -> Fp {
    assert_eq!(size_of::<T>(), size_of::<Fp>());
    // SAFETY: T is a C function pointer type of the slot.
    unsafe { std::mem::transmute_copy::<T, Fp>(&f) }
}

fn addr(f: Fp) -> usize {
    f.map_or(0, |f| f as *const () as usize)
}

#[test]
fn onload_shadows_maps_and_redirects_through_the_runtime_table() {
    let dir = std::env::temp_dir().join(format!("rocjitsu-hooks-fake-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("guest.json");
    std::fs::write(
        &cfg,
        r#"{"dbt_guest": {"enabled": true, "guest_isa": "gfx950", "host_isa": "gfx942", "host_gpu_id": 0, "log_level": "warn"}}"#,
    )
    .unwrap();
    // SAFETY: the only test that touches the environment.
    unsafe { std::env::set_var("ROCJITSU_DBT_CONFIG", &cfg) };

    // SAFETY: zeroed tables are valid (null slots).
    let mut core: Box<CoreApiTable> = Box::new(unsafe { std::mem::zeroed() });
    // An AMD table as long as ROCm 6.4.3's: ROCm 7's additions must stay untouched.
    // SAFETY: as above.
    let mut amd: Box<AmdExtTable> = Box::new(unsafe { std::mem::zeroed() });
    core.version = ApiTableVersion {
        major_id: 2,
        minor_id: size_of::<CoreApiTable>() as u32,
        step_id: 0,
        reserved: 0,
    };
    amd.version = ApiTableVersion {
        major_id: 2,
        minor_id: 592,
        step_id: 5,
        reserved: 0,
    };
    core.hsa_iterate_agents = fp(fake_iterate as unsafe extern "C" fn(_, _) -> _);
    core.hsa_agent_get_info = fp(fake_get_info as unsafe extern "C" fn(_, _, _) -> _);
    core.hsa_queue_create =
        fp(fake_queue_create as unsafe extern "C" fn(_, _, _, _, _, _, _, _) -> _);
    amd.hsa_amd_agents_allow_access =
        fp(fake_allow_access as unsafe extern "C" fn(_, _, _, _) -> _);
    amd.hsa_amd_pointer_info = fp(fake_pointer_info as unsafe extern "C" fn(_, _, _, _, _) -> _);
    let sentinel = fp(fake_allow_access as unsafe extern "C" fn(_, _, _, _) -> _);
    amd.hsa_amd_memory_get_preferred_copy_engine = sentinel;
    let mut root = HsaApiTable {
        version: ApiTableVersion {
            major_id: 3,
            minor_id: 64,
            step_id: 1,
            reserved: 0,
        },
        core: &mut *core,
        amd_ext: &mut *amd,
        finalizer_ext: std::ptr::null_mut(),
        image_ext: std::ptr::null_mut(),
        tools: std::ptr::null_mut(),
        pc_sampling_ext: std::ptr::null_mut(),
    };
    // SAFETY: a well-formed table that outlives the test.
    assert!(unsafe { crate::OnLoad(&mut root, 3, 0, std::ptr::null()) });
    assert_ne!(
        addr(core.hsa_iterate_agents),
        addr(fp(fake_iterate as unsafe extern "C" fn(_, _) -> _)),
        "iterate_agents hooked"
    );
    assert!(
        core.hsa_executable_freeze.is_none(),
        "empty slots stay empty"
    );
    assert_eq!(
        addr(amd.hsa_amd_memory_get_preferred_copy_engine),
        addr(sentinel),
        "slot past the table's length untouched"
    );

    // The enumeration shows the guest in the host's slot, once.
    unsafe extern "C" fn collect(a: Agent, data: *mut c_void) -> Status {
        // SAFETY: `data` is the Vec below.
        unsafe { (*data.cast::<Vec<u64>>()).push(a.handle) };
        HSA_STATUS_SUCCESS
    }
    let mut seen: Vec<u64> = Vec::new();
    type Iterate = unsafe extern "C" fn(
        Option<unsafe extern "C" fn(Agent, *mut c_void) -> Status>,
        *mut c_void,
    ) -> Status;
    // SAFETY: the installed hook of this signature.
    let iterate: Iterate = unsafe { std::mem::transmute(core.hsa_iterate_agents.unwrap()) };
    // SAFETY: a valid callback and data.
    let s = unsafe { iterate(Some(collect), (&raw mut seen).cast()) };
    assert_eq!(s, HSA_STATUS_SUCCESS);
    assert_eq!(seen, vec![CPU, GUEST]);

    // Identity from the guest, queue limits from the host.
    type GetInfo = unsafe extern "C" fn(Agent, u32, *mut c_void) -> Status;
    // SAFETY: the installed hook of this signature.
    let get_info: GetInfo = unsafe { std::mem::transmute(core.hsa_agent_get_info.unwrap()) };
    let mut name = [0u8; 64];
    CALLS.lock().unwrap().clear();
    // SAFETY: a 64-byte name buffer.
    unsafe {
        get_info(
            Agent { handle: GUEST },
            HSA_AGENT_INFO_NAME,
            name.as_mut_ptr().cast(),
        )
    };
    assert!(name.starts_with(b"gfx950\0"));
    let mut max = 0u64;
    // SAFETY: the fake writes 8 bytes.
    unsafe {
        get_info(
            Agent { handle: GUEST },
            HSA_AGENT_INFO_QUEUE_MAX_SIZE,
            (&raw mut max).cast(),
        )
    };
    assert_eq!(max, HOST);

    // Queue creation and allow-access lists go to the host.
    type QueueCreate = unsafe extern "C" fn(
        Agent,
        u32,
        u32,
        Option<unsafe extern "C" fn(Status, *mut Queue, *mut c_void)>,
        *mut c_void,
        u32,
        u32,
        *mut *mut Queue,
    ) -> Status;
    // SAFETY: the installed hook of this signature.
    let queue_create: QueueCreate = unsafe { std::mem::transmute(core.hsa_queue_create.unwrap()) };
    let mut q: *mut Queue = std::ptr::null_mut();
    // SAFETY: the fake ignores everything but the agent.
    unsafe {
        queue_create(
            Agent { handle: GUEST },
            64,
            0,
            None,
            std::ptr::null_mut(),
            0,
            0,
            &mut q,
        )
    };
    type Allow = unsafe extern "C" fn(u32, *const Agent, *const u32, *const c_void) -> Status;
    // SAFETY: the installed hook of this signature.
    let allow: Allow = unsafe { std::mem::transmute(amd.hsa_amd_agents_allow_access.unwrap()) };
    let list = [Agent { handle: CPU }, Agent { handle: GUEST }];
    // SAFETY: two agents.
    unsafe { allow(2, list.as_ptr(), std::ptr::null(), std::ptr::null()) };
    let calls = CALLS.lock().unwrap().clone();
    assert_eq!(
        calls,
        vec![
            ("get_info", GUEST),
            ("get_info", HOST),
            ("queue_create", HOST),
            ("allow_access", CPU),
            ("allow_access", HOST)
        ]
    );

    // Pointer info hands back the guest as owner and in the access list.
    type PtrInfo = unsafe extern "C" fn(
        *const c_void,
        *mut PointerInfo,
        Option<unsafe extern "C" fn(usize) -> *mut c_void>,
        *mut u32,
        *mut *mut Agent,
    ) -> Status;
    // SAFETY: the installed hook of this signature.
    let ptr_info: PtrInfo = unsafe { std::mem::transmute(amd.hsa_amd_pointer_info.unwrap()) };
    // SAFETY: zeroed plain data.
    let mut info: PointerInfo = unsafe { std::mem::zeroed() };
    info.size = size_of::<PointerInfo>() as u32;
    let (mut n, mut acc): (u32, *mut Agent) = (0, std::ptr::null_mut());
    // SAFETY: valid out pointers.
    unsafe { ptr_info(std::ptr::null(), &mut info, None, &mut n, &mut acc) };
    assert_eq!(info.agent_owner.handle, GUEST);
    // SAFETY: the fake returned two agents.
    let acc = unsafe { std::slice::from_raw_parts(acc, n as usize) };
    assert_eq!(acc, [Agent { handle: CPU }, Agent { handle: GUEST }]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn install_touches_only_present_non_null_slots() {
    unsafe extern "C" fn original() {}
    unsafe extern "C" fn hook() {}
    let orig: Fp = Some(original);
    let new: Fp = Some(hook);
    // A 6-slot table whose version says only 4 slots (16 + 4 * 8 bytes) exist,
    // slot 1 empty in the runtime.
    let mut table: [u64; 2 + 6] = [0; 8];
    for (i, t) in table.iter_mut().enumerate().skip(2) {
        if i != 3 {
            *t = addr(orig) as u64;
        }
    }
    let hooks: Vec<(usize, Fp)> = (0..6).map(|i| (16 + i * 8, new)).collect();
    // SAFETY: a writable 64-byte buffer standing for the table.
    let n = unsafe { crate::install(table.as_mut_ptr().cast(), 16 + 4 * 8, &hooks, "test") };
    assert_eq!(n, 3, "slots 0, 2, 3 hooked");
    let (o, h) = (addr(orig) as u64, addr(new) as u64);
    assert_eq!(
        &table[2..],
        &[h, 0, h, h, o, o],
        "empty and absent slots untouched"
    );
}
