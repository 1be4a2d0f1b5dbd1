//! The API role's long-running tasks (the usage flusher, the submission listener, the metrics
//! listener, …): each started by [`crate::startup::Application::run`] under a name, and stopped
//! with the role. Nothing in the API spawns work of its own from a constructor.

use std::{future::Future, time::Duration};

use tokio::{sync::watch, task::JoinSet};

pub struct Background {
    tasks: JoinSet<&'static str>,
    stop: watch::Sender<bool>,
}

impl Default for Background {
    fn default() -> Self {
        Background { tasks: JoinSet::new(), stop: watch::channel(false).0 }
    }
}

impl Background {
    /// Run `task` until it ends or the role stops, whichever comes first.
    pub fn spawn(&mut self, name: &'static str, task: impl Future<Output = ()> + Send + 'static) {
        let mut stop = self.stop.subscribe();
        self.tasks.spawn(async move {
            tokio::select! {
                _ = task => tracing::warn!(task = name, "background task ended on its own"),
                _ = stop.wait_for(|s| *s) => {}
            }
            name
        });
        tracing::debug!(task = name, "background task started");
    }

    /// Stop every task and wait for them (a task caught mid-step is given `grace` to notice).
    pub async fn stop(mut self, grace: Duration) {
        self.stop.send(true).ok();
        let all = async {
            while let Some(done) = self.tasks.join_next().await {
                if let Ok(name) = done {
                    tracing::debug!(task = name, "background task stopped");
                }
            }
        };
        if tokio::time::timeout(grace, all).await.is_err() {
            self.tasks.abort_all();
        }
    }
}
