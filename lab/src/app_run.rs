//! An application on a system file, run as calibration and validation run it: every process
//! label of the system once, the run's default options, the launch's variables.

use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

use anyhow::{anyhow, Result};
use hetsim_scripting::kernels::KernelLibrary;
use hetsim_scripting::{default_labels, run_with_kernels, RunOptions, RunReport};
use hetsim_system::{System, Variable};

use crate::files::read_text;

/// The application `app` on `system`.
#[derive(Clone)]
pub struct AppRun {
    app: String,
    origin: String,
    pub system: System,
    labels: BTreeMap<String, u64>,
}

impl AppRun {
    pub fn new(app: &Path, system: System) -> Result<AppRun> {
        Ok(AppRun {
            app: read_text(app)?,
            origin: app.display().to_string(),
            labels: default_labels(&system),
            system,
        })
    }

    /// The application's file, as errors name it.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// A run with `variables`, its kernels analysed through `kernels` where given (runs
    /// that share a library analyse each launch once), else through a library of its own.
    pub fn run(
        &self,
        variables: &[(String, Variable)],
        kernels: Option<Rc<KernelLibrary>>,
    ) -> Result<RunReport> {
        let kernels = match kernels {
            Some(k) => k,
            None => {
                Rc::new(KernelLibrary::for_system(&self.system).map_err(|e| anyhow!("{}: {e}", self.origin))?)
            }
        };
        let variables = variables.iter().cloned().collect();
        run_with_kernels(
            &self.app,
            &self.origin,
            &self.system,
            &self.labels,
            &variables,
            &RunOptions::default(),
            kernels,
        )
        .map_err(|e| anyhow!("{}: {e}", self.origin))
    }
}
