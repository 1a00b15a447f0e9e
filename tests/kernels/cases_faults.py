"""Cases that must fault: a null store, a load far outside any buffer, a
trap, and a kernel that never finishes (stopped by --timeout). Each expects
run-kernel's exit status 2 and a fault report naming the cause."""

import numpy as np

from harness import In, Launch, Null, Out, case, i32, i64


@case("fault_null_store", "faults", "null_store")
def fault_null_store(rng, target):
    return Launch(1, 64, [Null(), i32(5)], [], expect_fault=r"memory fault.*write")


@case("fault_far_load", "faults", "far_load")
def fault_far_load(rng, target):
    x = np.arange(64, dtype=np.int32)
    return Launch(1, 64, [Out("out", np.int32, 64), In(x), i64(1 << 40)], [], expect_fault=r"memory fault.*read")


@case("fault_trap", "faults", "trap")
def fault_trap(rng, target):
    x = np.arange(64, dtype=np.int32)
    return Launch(1, 64, [Out("out", np.int32, 64), In(x)], [], expect_fault=r"trap")


@case("fault_timeout", "faults", "spin_forever", timeout=3)
def fault_timeout(rng, target):
    return Launch(1, 64, [Out("out", np.int32, 64), In(np.zeros(1, np.int32))], [], expect_fault=r"timeout")
