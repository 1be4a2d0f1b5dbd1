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
    /// one of the adapter's permits until the call returns (see the module's invariant). A
    /// call whose caller stopped waiting before a thread took it is not made.
    pub fn call<T: Send + 'static>(
        &self,
        call: impl FnOnce() -> T + Send + 'static,
    ) -> oneshot::Receiver<Result<T, Panicked>> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            // The caller timed out while this waited: its attempt is recorded as such, so
            // making the call now could only repeat what a later attempt does.
            if tx.is_closed() {
                return;
            }
            let answer = catch_unwind(AssertUnwindSafe(call)).map_err(|p| {
                let message = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".into());
                Panicked(message)
            });
            let _ = tx.send(answer);
        });
        let wake = {
            let mut s = self.inner.lock();
            s.queue.push_back(job);
            s.wake_one(self.inner.max)
        };
        self.inner.wake(wake);
        rx
    }
}

impl Drop for Callers {
    fn drop(&mut self) {
        self.inner.lock().closed = true;
        self.inner.queued.notify_all();
    }
}

/// What [`State::wake_one`] decided, done once the lock is released.
#[must_use]
enum Wake {
    Nobody,
    Idle,
    Start,
}

impl State {
    /// Make sure one thread is on its way to the queue: wake an idle one, or start one (the
    /// slot is taken here, the thread started by [`Inner::wake`]).
    fn wake_one(&mut self, max: usize) -> Wake {
        if self.waking || self.queue.is_empty() {
            return Wake::Nobody;
        }
        if self.idle > 0 {
            self.waking = true;
            Wake::Idle
        } else if self.threads < max {
            self.threads += 1;
            self.waking = true;
            Wake::Start
        } else {
            // Every thread is busy, and the first to finish takes the call.
            Wake::Nobody
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while the lock is held (calls run outside it).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wake(self: &Arc<Self>, wake: Wake) {
        match wake {
            Wake::Nobody => {}
            Wake::Idle => self.queued.notify_one(),
            Wake::Start => {
                let inner = self.clone();
                let name = format!("tns-call-{}", self.name);
                if let Err(e) = std::thread::Builder::new().name(name).spawn(move || inner.work()) {
                    tracing::error!(adapter = %self.name, error = %e, "starting a call thread failed");
                    let mut s = self.lock();
                    s.threads -= 1;
                    s.waking = false;
                    if s.threads == 0 {
                        // No thread would ever take them: dropped, each caller hears that its
                        // call's thread ended (and its permit is released).
                        s.queue.clear();
                    }
                }
            }
        }
    }

    /// A thread's life: take queued calls one at a time; sleep when there are none; end after
    /// `KEEP_ALIVE` without any, or when the pool is dropped and nothing is queued.
    fn work(self: Arc<Self>) {
        // Uncounts this thread however it ends (declared before the lock, so dropped after it).
        let _counted = Counted(&self);
        let mut s = self.lock();
        // Started by `wake_one`: this thread is the one on its way.
        s.waking = false;
        loop {
            if let Some(job) = s.queue.pop_front() {
                // More queued than this thread takes: the next thread goes too.
                let wake = s.wake_one(self.max);
                drop(s);
                self.wake(wake);
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
    }
}

/// A running thread, counted in `State::threads` until it ends.
struct Counted<'a>(&'a Inner);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.lock().threads -= 1;
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
    async fn a_call_nobody_waits_for_any_more_is_not_made() {
        let pool = Callers::new("test", 1);
        let (release, held) = std::sync::mpsc::channel::<()>();
        let first = pool.call(move || held.recv().is_ok());
        let made = Arc::new(AtomicUsize::new(0));
        let counted = made.clone();
        // Queued behind the first (one thread), and given up on before it is taken.
        drop(pool.call(move || counted.fetch_add(1, Ordering::SeqCst)));
        release.send(()).unwrap();
        assert!(first.await.unwrap().unwrap());
        // The thread took the second job before this third one: once this is answered, the
        // second was either made or skipped.
        assert_eq!(pool.call(|| 3u8).await.unwrap().unwrap(), 3);
        assert_eq!(made.load(Ordering::SeqCst), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_call_is_an_answer_and_the_thread_goes_on() {
        let pool = Callers::new("test", 1);
        let boom = pool.call(|| -> u8 { panic!("plugin broke") });
        assert_eq!(boom.await.unwrap().unwrap_err().0, "plugin broke");
        assert_eq!(pool.call(|| 7u8).await.unwrap().unwrap(), 7);
    }
}
