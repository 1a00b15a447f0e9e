//! A queue's persistent dispatch threads: a dispatch of several workgroups
//! runs its workers on them instead of starting threads every time (which
//! would cost tens of microseconds per dispatch).

use crate::exec::dispatch::Workers;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// A job borrowed for the duration of one [`Pool::run`].
#[derive(Clone, Copy)]
struct Job(*const (dyn Fn() + Sync + 'static));

// SAFETY: the pointee is `Sync`, and `Pool::run` keeps it alive until every
// worker that took it has finished with it.
unsafe impl Send for Job {}

#[derive(Default)]
struct State {
    job: Option<Job>,
    /// Bumped for every job, so a worker takes at most one instance of each.
    generation: u64,
    /// Instances of the current job no worker has taken yet.
    unclaimed: usize,
    /// Instances taken and not finished.
    running: usize,
    /// An instance of the current job panicked on a worker.
    panicked: bool,
    shutdown: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Worker threads, started as dispatches first need them.
pub struct Pool {
    name: String,
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Pool {
    pub fn new(name: String) -> Pool {
        Pool {
            name,
            shared: Arc::default(),
            threads: Mutex::new(Vec::new()),
        }
    }

    /// Starts threads until there are `n` (or starting one fails: the job
    /// then runs on fewer).
    fn grow(&self, n: usize) -> usize {
        let mut t = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        while t.len() < n {
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("{}w{}", self.name, t.len()))
                .spawn(move || work(&shared));
            match spawned {
                Ok(h) => t.push(h),
                Err(_) => break,
            }
        }
        t.len().min(n)
    }
}

fn work(shared: &Shared) {
    let mut seen = 0;
    loop {
        let mut st = shared.lock();
        let job = loop {
            if st.shutdown {
                return;
            }
            if st.generation != seen {
                seen = st.generation;
                if st.unclaimed > 0 {
                    st.unclaimed -= 1;
                    break st.job;
                }
            }
            st = shared.work.wait(st).unwrap_or_else(|e| e.into_inner());
        };
        drop(st);
        if let Some(Job(f)) = job {
            // SAFETY: `run` published this job and waits for `running` to
            // drop to 0 before it returns, so the closure is alive here.
            let f = unsafe { &*f };
            // A dispatch worker does not panic; should it, the instance
            // still counts as finished so that `run` returns, and `run`
            // passes the panic on to its caller.
            let r = catch_unwind(AssertUnwindSafe(f));
            shared.lock().panicked |= r.is_err();
        }
        let mut st = shared.lock();
        st.running -= 1;
        if st.running == 0 {
            shared.done.notify_all();
        }
    }
}

impl Workers for Pool {
    fn run(&self, n: usize, job: &(dyn Fn() + Sync)) {
        let helpers = self.grow(n.saturating_sub(1));
        let ptr: *const (dyn Fn() + Sync + '_) = job;
        // SAFETY: only the lifetime is erased; the workers use the pointer
        // only until `running` drops to 0, which this function waits for
        // before returning (also when `job` panics on this thread).
        let ptr: *const (dyn Fn() + Sync + 'static) = unsafe { std::mem::transmute(ptr) };
        {
            let mut st = self.shared.lock();
            st.job = Some(Job(ptr));
            st.generation += 1;
            st.unclaimed = helpers;
            st.running = helpers;
            st.panicked = false;
            self.shared.work.notify_all();
        }
        let mine = catch_unwind(AssertUnwindSafe(job));
        let mut st = self.shared.lock();
        // Instances no worker took are not run (the others did their share).
        st.running -= st.unclaimed;
        st.unclaimed = 0;
        while st.running > 0 {
            st = self.shared.done.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.job = None;
        let theirs = st.panicked;
        drop(st);
        if let Err(p) = mine {
            resume_unwind(p);
        }
        if theirs {
            resume_unwind(Box::new("a dispatch worker thread panicked"));
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.work.notify_all();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn instances_run_on_distinct_threads_and_run_waits_for_them() {
        let pool = Pool::new("test".into());
        for n in [1, 3, 2, 4] {
            let count = AtomicUsize::new(0);
            let ids = Mutex::new(Vec::new());
            pool.run(n, &|| {
                ids.lock().unwrap().push(std::thread::current().id());
                std::thread::sleep(std::time::Duration::from_millis(5));
                count.fetch_add(1, Ordering::Relaxed);
            });
            // Workers that woke late may have found nothing left to take,
            // but every instance that started has finished.
            let c = count.load(Ordering::Relaxed);
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert_eq!(
                count.load(Ordering::Relaxed),
                c,
                "nothing runs after run returns"
            );
            assert!((1..=n).contains(&c), "{c} of {n}");
            let mut ids = ids.into_inner().unwrap();
            ids.sort_by_key(|i| format!("{i:?}"));
            ids.dedup();
            assert_eq!(ids.len(), c, "one instance per thread");
        }
    }

    #[test]
    fn a_worker_panic_reaches_the_caller_and_the_pool_still_works() {
        let pool = Pool::new("test".into());
        let main = std::thread::current().id();
        let started = std::sync::atomic::AtomicBool::new(false);
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.run(2, &|| {
                if std::thread::current().id() != main {
                    started.store(true, Ordering::Release);
                    panic!("worker fails");
                }
                // Wait for the worker to take its instance.
                let t = std::time::Instant::now();
                while !started.load(Ordering::Acquire) && t.elapsed().as_secs() < 10 {
                    std::thread::yield_now();
                }
            })
        }));
        assert!(r.is_err());
        let count = AtomicUsize::new(0);
        pool.run(2, &|| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert!(count.load(Ordering::Relaxed) >= 1);
    }
}
