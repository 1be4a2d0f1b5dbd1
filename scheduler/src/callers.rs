//! The threads an adapter's calls run on. A plugin's call blocks (a SOAP exchange, a sandbox
//! delay), so it cannot run on the async runtime; each adapter gets a pool of at most
//! `adapter_concurrency` threads of its own.
//!
//! Why not `spawn_blocking`: it wakes an idle thread for every call. Handing a batch of quick
//! calls over that way cost more than the calls (the futex wake, the woken thread's context
//! switch, the thread parking again), a third of the scheduler's CPU with the zero-delay
//! sandbox. Here at most one thread is being woken at a time: a thread that takes a call
//! while more are queued wakes the next one, and a thread that finishes a call takes the next
//! queued one without sleeping. Quick calls are then run back to back by one or two threads,
//! and slow ones (a 50 ms downstream) still spread over as many threads as they need, one
//! wake-up latency apart.
//!
//! Invariant: a caller holds one of the adapter's permits (its `Semaphore`, sized like this
//! pool) from before it queues a call until the call returns, so calls queued or running never
//! outnumber the threads this pool may have: a queued call always finds a thread, even when
//! others are stuck in a plugin that hangs.

use std::{
    collections::VecDeque,
    panic::{catch_unwind, AssertUnwindSafe},
    sync::{Arc, Condvar, Mutex, MutexGuard},
    time::Duration,
};

use tokio::sync::{oneshot, Semaphore};

/// An adapter's calls: the permits that bound how many run at once, and the threads they
/// run on (as many as there are permits).
pub struct Lane {
    pub permits: Arc<Semaphore>,
    pub threads: Callers,
}

impl Lane {
    pub fn new(adapter: &str, concurrency: usize) -> Self {
        Lane { permits: Arc::new(Semaphore::new(concurrency)), threads: Callers::new(adapter, concurrency) }
    }
}

/// How long an idle thread waits for a call before it ends.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

type Job = Box<dyn FnOnce() + Send>;

/// One adapter's call threads. Dropping it lets its threads finish what is queued and end.
pub struct Callers {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    max: usize,
    state: Mutex<State>,
    queued: Condvar,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    threads: usize,
    idle: usize,
    /// A thread has been woken (or started) and has not yet looked at the queue: waking
    /// another before it has would wake one thread per call.
    waking: bool,
    closed: bool,
}

/// A call that ended by a panic in the plugin (its message), not by an answer.
#[derive(Debug)]
pub struct Panicked(pub String);

impl Callers {
    /// A pool for the adapter `name` of at most `max` threads, started as calls need them.
    pub fn new(name: &str, max: usize) -> Self {
        let inner = Inner {
            name: name.to_string(),
            max: max.max(1),
            state: Mutex::new(State::default()),
            queued: Condvar::new(),
        };
        Callers { inner: Arc::new(inner) }
    }

    /// Run `call` on one of the threads; the answer arrives on the receiver. The caller holds
    /// one of the adapter's permits until the call returns (see the module's invariant).
    pub fn call<T: Send + 'static>(
        &self,
        call: impl FnOnce() -> T + Send + 'static,
    ) -> oneshot::Receiver<Result<T, Panicked>> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            let answer = catch_unwind(AssertUnwindSafe(call)).map_err(|p| {
                let message = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".into());
                Panicked(message)
            });
            // The caller stopped waiting (it timed out): nobody to tell.
            let _ = tx.send(answer);
        });
        let mut s = self.inner.lock();
        s.queue.push_back(job);
        self.inner.wake_one(&mut s);
        rx
    }
}

impl Drop for Callers {
    fn drop(&mut self) {
        self.inner.lock().closed = true;
        self.inner.queued.notify_all();
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A job never panics while the lock is held (jobs run outside it).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Make sure one thread is on its way to the queue: wake an idle one, or start one.
    fn wake_one(self: &Arc<Self>, s: &mut State) {
        if s.waking || s.queue.is_empty() {
            return;
        }
        if s.idle > 0 {
            s.waking = true;
            self.queued.notify_one();
        } else if s.threads < self.max {
            let inner = self.clone();
            let started =
                std::thread::Builder::new().name(format!("tns-call-{}", self.name)).spawn(move || inner.work());
            match started {
                Ok(_) => {
                    s.threads += 1;
                    s.waking = true;
                }
                // The running threads take the call when they are done; the lease bounds the wait.
                Err(e) => tracing::error!(adapter = %self.name, error = %e, "starting a call thread failed"),
            }
        }
        // Otherwise every thread is busy, and the first to finish takes the call.
    }

    /// A thread's life: take queued calls one at a time; sleep when there are none; end after
    /// `KEEP_ALIVE` without any, or when the pool is dropped and nothing is queued.
    fn work(self: Arc<Self>) {
        let mut s = self.lock();
        // Started by `wake_one`: this thread is the one on its way.
        s.waking = false;
        loop {
            if let Some(job) = s.queue.pop_front() {
                // More queued than this thread takes: the next thread goes too.
                self.wake_one(&mut s);
                drop(s);
                job();
                s = self.lock();
                continue;
            }
            if s.closed {
                break;
            }
            s.idle += 1;
            let (next, waited) = self.queued.wait_timeout(s, KEEP_ALIVE).unwrap_or_else(|p| p.into_inner());
            s = next;
            s.idle -= 1;
            // Woken (or timed out, or spuriously): either way this thread now looks at the queue,
            // so another may be woken for what it leaves.
            s.waking = false;
            if waited.timed_out() && s.queue.is_empty() {
                break;
            }
        }
        s.threads -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_call_is_answered_and_runs_on_at_most_max_threads() {
        let pool = Callers::new("test", 4);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let answers: Vec<_> = (0..200)
            .map(|i| {
                let (running, most) = (running.clone(), most.clone());
                pool.call(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_micros(200));
                    running.fetch_sub(1, Ordering::SeqCst);
                    i * 2
                })
            })
            .collect();
        for (i, a) in answers.into_iter().enumerate() {
            assert_eq!(a.await.unwrap().unwrap(), i * 2);
        }
        assert!(most.load(Ordering::SeqCst) <= 4, "ran {} at once", most.load(Ordering::SeqCst));
        assert!(pool.inner.lock().threads <= 4);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn slow_calls_spread_over_threads() {
        // Eight calls that each wait for all eight to have started: they finish only if
        // eight threads run them at once.
        let pool = Callers::new("test", 8);
        let gate = Arc::new(std::sync::Barrier::new(8));
        let answers: Vec<_> = (0..8)
            .map(|_| {
                let gate = gate.clone();
                pool.call(move || gate.wait().is_leader())
            })
            .collect();
        let mut leaders = 0;
        for a in answers {
            leaders += usize::from(a.await.unwrap().unwrap());
        }
        assert_eq!(leaders, 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_call_is_an_answer_and_the_thread_goes_on() {
        let pool = Callers::new("test", 1);
        let boom = pool.call(|| -> u8 { panic!("plugin broke") });
        assert_eq!(boom.await.unwrap().unwrap_err().0, "plugin broke");
        assert_eq!(pool.call(|| 7u8).await.unwrap().unwrap(), 7);
    }
}
