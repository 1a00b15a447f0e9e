//! The agent shadowing rules, as pure functions over handles.
//!
//! ROCr knows two GPU agents for the one GPU the application sees: the
//! *host* agent (the GPU that runs the translated code) and the synthetic
//! *guest* agent (the GPU identity the application compiles for, which
//! cannot execute). The public identity is the guest; the execution
//! identity is the host. [`Pair::to_exec`] maps what the application hands
//! in, [`Pair::to_public`] what the runtime hands out.

use crate::abi::{Agent, Pool};

/// What discovery learns about one agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentInfo {
    pub agent: Agent,
    pub is_gpu: bool,
    /// `HSA_DEVICE_TYPE_CPU` (KFD numbers CPU nodes before GPU nodes).
    pub is_cpu: bool,
    /// `HSA_AGENT_INFO_NAME`, e.g. `gfx942`.
    pub name: String,
    /// `HSA_AMD_AGENT_INFO_DRIVER_NODE_ID` (the KFD topology node).
    pub node: u32,
}

/// Which agents to pair, from the `dbt_guest` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    pub guest_isa: String,
    pub host_isa: String,
    /// The host GPU's index among the host's GPU nodes in KFD node order,
    /// from 0 (`dbt_guest.host_gpu_id`): KFD node `CPU nodes + host_gpu_id`.
    pub host_gpu_id: u32,
    /// A KFD node id that overrides the guest choice (ROCJITSU_DBT_GUEST_NODE).
    pub guest_node: Option<u32>,
    /// A KFD node id that overrides the host choice (ROCJITSU_DBT_HOST_NODE).
    pub host_node: Option<u32>,
}

/// The host and guest agents of this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    pub host: Agent,
    pub guest: Agent,
}

impl Pair {
    /// The agent the runtime must act on for an agent the application passed.
    pub fn to_exec(&self, agent: Agent) -> Agent {
        if agent == self.guest {
            self.host
        } else {
            agent
        }
    }

    /// The agent the application must see for an agent the runtime returned.
    pub fn to_public(&self, agent: Agent) -> Agent {
        if agent == self.host {
            self.guest
        } else {
            agent
        }
    }

    /// The public enumeration: the guest in the host's slot, the guest's own
    /// slot suppressed, every other agent unchanged and in order.
    pub fn shadow(&self, agents: &[Agent]) -> Vec<Agent> {
        agents
            .iter()
            .filter(|&&a| a != self.guest)
            .map(|&a| self.to_public(a))
            .collect()
    }

    /// Maps a list the application passed (allow-access lists, consumers).
    pub fn to_exec_all(&self, agents: &[Agent]) -> Vec<Agent> {
        agents.iter().map(|&a| self.to_exec(a)).collect()
    }

    /// Maps, in place, a list the runtime returned.
    pub fn to_public_in_place(&self, agents: &mut [Agent]) {
        for a in agents {
            *a = self.to_public(*a);
        }
    }
}

/// Why no pair could be formed; each names what was found and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SelectError {
    NoGuest {
        guest_isa: String,
        gpus: String,
    },
    NoHost {
        index: u32,
        node: u32,
        gpus: String,
    },
    HostIsa {
        index: u32,
        found: String,
        host_isa: String,
    },
    NodeNotFound {
        which: &'static str,
        node: u32,
        gpus: String,
    },
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SelectError::NoGuest { guest_isa, gpus } => write!(
                f,
                "no {guest_isa} guest agent among the runtime's GPU agents [{gpus}]: the guest KFD node is missing (run under `rocjitsu --config <guest config>`)"
            ),
            SelectError::NoHost { index, node, gpus } => write!(
                f,
                "dbt_guest.host_gpu_id is {index} (KFD node {node}), but no host GPU agent has that node [{gpus}] (GPUs count from 0 after the CPU nodes; check ROCR_VISIBLE_DEVICES)"
            ),
            SelectError::HostIsa {
                index,
                found,
                host_isa,
            } => write!(
                f,
                "host GPU {index} is a {found}, not the configured dbt_guest.host_isa {host_isa}"
            ),
            SelectError::NodeNotFound { which, node, gpus } => write!(
                f,
                "{which} names KFD node {node}, but no GPU agent has it [{gpus}]"
            ),
        }
    }
}

fn describe(gpus: &[&AgentInfo]) -> String {
    gpus.iter()
        .map(|g| format!("{} (node {})", g.name, g.node))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Picks the guest and host agents from the runtime's enumeration.
///
/// The guest is the GPU agent named `guest_isa` on the highest KFD node (the
/// synthetic node is appended after the host's), unless a node is given.
/// The host is the GPU agent on KFD node `CPU agents + host_gpu_id` (KFD
/// numbers the CPU nodes first, then the GPUs), unless a node is given; the
/// enumeration order does not matter, since `ROCR_VISIBLE_DEVICES` may
/// reorder it. Its name must be `host_isa`.
pub fn select(agents: &[AgentInfo], sel: &Selection) -> Result<Pair, SelectError> {
    let gpus: Vec<&AgentInfo> = agents.iter().filter(|a| a.is_gpu).collect();
    let guest = match sel.guest_node {
        Some(node) => gpus
            .iter()
            .find(|g| g.node == node)
            .copied()
            .ok_or_else(|| SelectError::NodeNotFound {
                which: rocjitsu_config::env::DBT_GUEST_NODE,
                node,
                gpus: describe(&gpus),
            })?,
        None => gpus
            .iter()
            .filter(|g| g.name == sel.guest_isa && Some(g.node) != sel.host_node)
            .max_by_key(|g| g.node)
            .copied()
            .ok_or_else(|| SelectError::NoGuest {
                guest_isa: sel.guest_isa.clone(),
                gpus: describe(&gpus),
            })?,
    };
    let hosts: Vec<&AgentInfo> = gpus
        .iter()
        .filter(|g| g.agent != guest.agent)
        .copied()
        .collect();
    let cpus = agents.iter().filter(|a| a.is_cpu).count() as u32;
    let (node, which) = match sel.host_node {
        Some(node) => (node, rocjitsu_config::env::DBT_HOST_NODE),
        None => (cpus + sel.host_gpu_id, "dbt_guest.host_gpu_id"),
    };
    let host = hosts
        .iter()
        .find(|g| g.node == node)
        .copied()
        .ok_or_else(|| {
            if sel.host_node.is_some() {
                SelectError::NodeNotFound {
                    which,
                    node,
                    gpus: describe(&gpus),
                }
            } else {
                SelectError::NoHost {
                    index: sel.host_gpu_id,
                    node,
                    gpus: describe(&hosts),
                }
            }
        })?;
    let index = sel.host_gpu_id;
    if host.name != sel.host_isa {
        return Err(SelectError::HostIsa {
            index,
            found: host.name.clone(),
            host_isa: sel.host_isa.clone(),
        });
    }
    Ok(Pair {
        host: host.agent,
        guest: guest.agent,
    })
}

/// The `hsa_agent_get_info` attributes of the guest agent that describe
/// execution resources, answered by the host agent: queues are created on
/// the host, memory and copy engines are the host's, and timestamps come
/// from the host's clock. Everything else (name, ISA, product, CU layout,
/// caches, limits) is the guest's public identity.
pub fn agent_info_from_host(attribute: u32) -> bool {
    use crate::abi::*;
    matches!(
        attribute,
        HSA_AGENT_INFO_QUEUES_MAX
            | HSA_AGENT_INFO_QUEUE_MIN_SIZE
            | HSA_AGENT_INFO_QUEUE_MAX_SIZE
            | HSA_AGENT_INFO_QUEUE_TYPE
            | HSA_AMD_AGENT_INFO_HDP_FLUSH
            | HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES
            | HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS
            | HSA_AMD_AGENT_INFO_MEMORY_AVAIL
            | HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY
            | HSA_AMD_AGENT_INFO_NUM_SDMA_ENG
            | HSA_AMD_AGENT_INFO_NUM_SDMA_XGMI_ENG
            | HSA_AMD_AGENT_INFO_IOMMU_SUPPORT
            | HSA_AMD_AGENT_INFO_MEMORY_PROPERTIES
            | HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_MAX
            | HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_CURRENT
    )
}

/// A GPU memory pool as discovery sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolInfo {
    pub pool: Pool,
    /// `HSA_AMD_MEMORY_POOL_INFO_SEGMENT`.
    pub segment: u32,
    /// `HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS`.
    pub flags: u32,
}

/// The guest's memory pools paired with the host's: the application sees
/// the guest's handles (and sizes), allocations and copies use the host's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolMap {
    /// (guest, host)
    pub pairs: Vec<(Pool, Pool)>,
}

impl PoolMap {
    /// Each host pool, in order, takes the first unpaired guest pool of the
    /// same segment and flags. A host pool without one stays visible under
    /// its own handle; a guest pool without one is never shown.
    pub fn pair(guest: &[PoolInfo], host: &[PoolInfo]) -> PoolMap {
        let mut used = vec![false; guest.len()];
        let mut pairs = Vec::new();
        for h in host {
            if let Some(i) = (0..guest.len())
                .find(|&i| !used[i] && guest[i].segment == h.segment && guest[i].flags == h.flags)
            {
                used[i] = true;
                pairs.push((guest[i].pool, h.pool));
            }
        }
        PoolMap { pairs }
    }

    pub fn to_exec(&self, pool: Pool) -> Pool {
        self.pairs
            .iter()
            .find(|p| p.0 == pool)
            .map_or(pool, |p| p.1)
    }

    pub fn to_public(&self, pool: Pool) -> Pool {
        self.pairs
            .iter()
            .find(|p| p.1 == pool)
            .map_or(pool, |p| p.0)
    }

    /// The guest pool a host pool stands for, if paired.
    pub fn guest_of(&self, host: Pool) -> Option<Pool> {
        self.pairs.iter().find(|p| p.1 == host).map(|p| p.0)
    }
}

/// The `hsa_amd_memory_pool_get_info` attributes of a guest pool that are
/// its public identity (the size); the rest (granules, alignment, limits,
/// flags) describe how the host allocates and come from the host pool.
pub fn pool_info_from_guest(attribute: u32) -> bool {
    attribute == crate::abi::HSA_AMD_MEMORY_POOL_INFO_SIZE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(h: u64) -> Agent {
        Agent { handle: h }
    }

    fn info(h: u64, gpu: bool, name: &str, node: u32) -> AgentInfo {
        AgentInfo {
            agent: a(h),
            is_gpu: gpu,
            is_cpu: !gpu,
            name: name.into(),
            node,
        }
    }

    fn sel(host_gpu_id: u32) -> Selection {
        Selection {
            guest_isa: "gfx950".into(),
            host_isa: "gfx942".into(),
            host_gpu_id,
            guest_node: None,
            host_node: None,
        }
    }

    /// CPU node 0, host gfx942 node 1, guest gfx950 node 2 (appended).
    fn one_host() -> Vec<AgentInfo> {
        vec![
            info(10, false, "AMD EPYC", 0),
            info(20, true, "gfx942", 1),
            info(30, true, "gfx950", 2),
        ]
    }

    #[test]
    fn guest_takes_the_host_slot_and_its_own_slot_is_suppressed() {
        let p = select(&one_host(), &sel(0)).unwrap();
        assert_eq!(
            p,
            Pair {
                host: a(20),
                guest: a(30)
            }
        );
        assert_eq!(p.shadow(&[a(10), a(20), a(30)]), vec![a(10), a(30)]);
        // The guest listed before the host (enumeration order is the runtime's).
        assert_eq!(p.shadow(&[a(30), a(10), a(20)]), vec![a(10), a(30)]);
    }

    #[test]
    fn shadowing_keeps_other_hosts_in_order() {
        let agents = vec![
            info(10, false, "cpu", 0),
            info(20, true, "gfx942", 1),
            info(21, true, "gfx942", 2),
            info(30, true, "gfx950", 3),
        ];
        let p = select(&agents, &sel(1)).unwrap();
        assert_eq!(
            p,
            Pair {
                host: a(21),
                guest: a(30)
            }
        );
        assert_eq!(
            p.shadow(&[a(10), a(20), a(21), a(30)]),
            vec![a(10), a(20), a(30)]
        );
    }

    #[test]
    fn handles_map_one_way_each() {
        let p = Pair {
            host: a(20),
            guest: a(30),
        };
        assert_eq!(p.to_exec(a(30)), a(20));
        assert_eq!(p.to_exec(a(20)), a(20));
        assert_eq!(p.to_exec(a(10)), a(10));
        assert_eq!(p.to_public(a(20)), a(30));
        assert_eq!(p.to_public(a(30)), a(30));
        assert_eq!(p.to_public(a(10)), a(10));
        assert_eq!(p.to_exec_all(&[a(10), a(30)]), vec![a(10), a(20)]);
        let mut out = [a(20), a(10), a(20)];
        p.to_public_in_place(&mut out);
        assert_eq!(out, [a(30), a(10), a(30)]);
    }

    #[test]
    fn missing_guest_names_the_gpus_found() {
        let agents = vec![info(10, false, "cpu", 0), info(20, true, "gfx942", 1)];
        let e = select(&agents, &sel(0)).unwrap_err();
        assert!(e.to_string().contains("no gfx950 guest agent"), "{e}");
        assert!(e.to_string().contains("gfx942 (node 1)"), "{e}");
    }

    #[test]
    fn host_index_out_of_range_and_wrong_isa_are_errors() {
        let e = select(&one_host(), &sel(1)).unwrap_err();
        assert_eq!(
            e,
            SelectError::NoHost {
                index: 1,
                node: 2,
                gpus: "gfx942 (node 1)".into()
            }
        );
        let agents = vec![
            info(10, false, "cpu", 0),
            info(20, true, "gfx90a", 1),
            info(30, true, "gfx950", 2),
        ];
        let e = select(&agents, &sel(0)).unwrap_err();
        assert!(matches!(e, SelectError::HostIsa { .. }), "{e:?}");
        assert!(e.to_string().contains("gfx90a"), "{e}");
    }

    #[test]
    fn host_is_found_by_node_whatever_the_enumeration_order() {
        // ROCR_VISIBLE_DEVICES=1 expanded by the launcher to "1,0,2": ROCr
        // lists GPU 1, GPU 0, then the guest; host_gpu_id 0 is still node 1.
        let agents = vec![
            info(10, false, "cpu", 0),
            info(21, true, "gfx942", 2),
            info(20, true, "gfx942", 1),
            info(30, true, "gfx950", 3),
        ];
        assert_eq!(
            select(&agents, &sel(0)).unwrap(),
            Pair {
                host: a(20),
                guest: a(30)
            }
        );
        assert_eq!(
            select(&agents, &sel(1)).unwrap(),
            Pair {
                host: a(21),
                guest: a(30)
            }
        );
        // Two CPU nodes: the GPUs start at node 2.
        let agents = vec![
            info(10, false, "cpu", 0),
            info(11, false, "cpu", 1),
            info(20, true, "gfx942", 2),
            info(30, true, "gfx950", 3),
        ];
        assert_eq!(
            select(&agents, &sel(0)).unwrap(),
            Pair {
                host: a(20),
                guest: a(30)
            }
        );
    }

    #[test]
    fn explicit_nodes_override_the_choice() {
        // A same-ISA pair (e.g. gfx1250 revisions): the nodes decide.
        let agents = vec![info(20, true, "gfx1250", 1), info(30, true, "gfx1250", 2)];
        let mut s = sel(0);
        s.guest_isa = "gfx1250".into();
        s.host_isa = "gfx1250".into();
        s.guest_node = Some(1);
        s.host_node = Some(2);
        assert_eq!(
            select(&agents, &s).unwrap(),
            Pair {
                host: a(30),
                guest: a(20)
            }
        );
        s.guest_node = Some(7);
        assert!(matches!(
            select(&agents, &s).unwrap_err(),
            SelectError::NodeNotFound { node: 7, .. }
        ));
    }

    #[test]
    fn pools_pair_by_segment_and_flags() {
        let p = |h, segment, flags| PoolInfo {
            pool: Pool { handle: h },
            segment,
            flags,
        };
        // Host: coarse VRAM, fine VRAM, kernarg-ish extra; guest: fine first, then coarse.
        let host = [p(1, 0, 4), p(2, 0, 2), p(3, 0, 1)];
        let guest = [p(11, 0, 2), p(12, 0, 4), p(13, 3, 0)];
        let m = PoolMap::pair(&guest, &host);
        assert_eq!(
            m.pairs,
            vec![
                (Pool { handle: 12 }, Pool { handle: 1 }),
                (Pool { handle: 11 }, Pool { handle: 2 })
            ]
        );
        assert_eq!(m.to_exec(Pool { handle: 12 }), Pool { handle: 1 });
        assert_eq!(m.to_public(Pool { handle: 2 }), Pool { handle: 11 });
        // The unpaired host pool keeps its handle; the unpaired guest pool maps to nothing.
        assert_eq!(m.to_public(Pool { handle: 3 }), Pool { handle: 3 });
        assert_eq!(m.guest_of(Pool { handle: 3 }), None);
        assert_eq!(m.to_exec(Pool { handle: 13 }), Pool { handle: 13 });
        assert!(pool_info_from_guest(
            crate::abi::HSA_AMD_MEMORY_POOL_INFO_SIZE
        ));
        assert!(!pool_info_from_guest(
            crate::abi::HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE
        ));
    }

    #[test]
    fn execution_attributes_come_from_the_host() {
        use crate::abi::*;
        assert!(agent_info_from_host(HSA_AGENT_INFO_QUEUE_MAX_SIZE));
        assert!(agent_info_from_host(HSA_AMD_AGENT_INFO_MEMORY_AVAIL));
        assert!(!agent_info_from_host(HSA_AGENT_INFO_NAME));
        assert!(!agent_info_from_host(HSA_AGENT_INFO_DEVICE));
        assert!(!agent_info_from_host(HSA_AMD_AGENT_INFO_DRIVER_NODE_ID));
    }
}
