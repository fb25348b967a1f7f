//! Analysed GPU kernels as a system model declares them (`[[kernel]]`), and the checks of
//! their listings when the system is loaded. The scripting crate's `kernel_params` serves
//! them to applications:
//!
//! ```toml
//! [[kernel]]
//! name = "saxpy2"                             # what kernel_params takes
//! sass = "../kernels/saxpy2-figure-5-2.sass"  # `cuobjdump -sass` output or a numbered listing
//! params = ["n", "a", "*x", "*y"]             # the kernel's parameters in order; `*` marks a pointer
//! threads = "n"                               # optional: grid = ⌈n / block⌉ when a call gives none
//! # function = "saxpy2"  arch = "sm_52"       # optional: which kernel of the listing, its architecture
//! ```
//!
//! A server cannot read files: `hetsim submit` inlines each `sass` file as `listing`.

use std::path::Path;

use hetsim_kernel::{select_kernel, Arch, Listing};
use serde::{Deserialize, Serialize};

use crate::error::SystemError;

/// A kernel as a system model declares it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelSpec {
    /// The name `kernel_params` takes.
    pub name: String,
    /// A listing file, relative to the system model's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sass: Option<String>,
    /// The listing's text (what a stored system holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing: Option<String>,
    /// Which kernel of the listing: a substring of its mangled or demangled name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// Overrides the listing's architecture (`sm_52`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// The kernel's parameters in order; a name starting with `*` is a pointer.
    pub params: Vec<String>,
    /// The parameter holding the number of threads, for a grid of ⌈threads / block⌉.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<String>,
}

/// A kernel's listing parsed, and the architecture it states or the spec overrides it with.
pub struct ParsedKernel {
    pub listing: Listing,
    pub arch: Option<Arch>,
}

/// Reads kernel `name`'s listing `file` relative to `base_dir`.
pub fn read_listing(name: &str, base_dir: &Path, file: &str) -> Result<String, SystemError> {
    let path = base_dir.join(file);
    std::fs::read_to_string(&path)
        .map_err(|e| SystemError::new(format!("kernel `{name}`: listing {}: {e}", path.display())))
}

impl KernelSpec {
    /// Reads the listing (from `base_dir`, or inline), then parses it and selects the kernel,
    /// so that a bad listing fails when the system is loaded rather than mid-run.
    pub fn resolve(mut self, base_dir: Option<&Path>) -> Result<KernelSpec, SystemError> {
        let owner = format!("kernel `{}`", self.name);
        if let Some(file) = self.sass.take() {
            let dir = base_dir.ok_or_else(|| {
                SystemError::new(format!("{owner}: `sass` names a file, which a server cannot read: give the listing inline as `listing` (hetsim submit does)"))
            })?;
            self.listing = Some(read_listing(&self.name, dir, &file)?);
        }
        let parsed = self.parse()?;
        select_kernel(&parsed.listing, self.function.as_deref(), parsed.arch)
            .map_err(|e| SystemError::new(format!("{owner}: {e}")))?;
        Ok(self)
    }

    /// The inline listing parsed, the architecture read, the parameter names checked.
    pub fn parse(&self) -> Result<ParsedKernel, SystemError> {
        let owner = format!("kernel `{}`", self.name);
        let text = self.listing.as_deref().ok_or_else(|| {
            SystemError::new(format!("{owner}: give `sass` (a file) or `listing` (its text)"))
        })?;
        let listing =
            hetsim_kernel::parse(text).map_err(|e| SystemError::new(format!("{owner}: listing {e}")))?;
        let arch = self
            .arch
            .as_deref()
            .map(str::parse::<Arch>)
            .transpose()
            .map_err(|e| SystemError::new(format!("{owner}: {e}")))?;
        for p in &self.params {
            if p.trim_start_matches('*').is_empty() {
                return Err(SystemError::new(format!(
                    "{owner}: params: an empty parameter name"
                )));
            }
        }
        Ok(ParsedKernel { listing, arch })
    }
}
