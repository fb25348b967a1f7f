//! hetsim-system: the system model, with no scripting language in it. What lives here:
//!
//! - [`spec`]: system files as written (TOML or JSON): components, computational models,
//!   nodes, links ([`SystemFile`] and its parts), and [`kernel`]: analysed GPU kernels;
//! - [`read`] and [`schema`]: a file's text as a JSON value, the JSON Schema generated from
//!   the spec types, and the check of a file against it;
//! - [`resolve`]: a file resolved against the catalog, its inline parts, the built-in
//!   computational models ([`models`]) and model files, into a [`System`] ([`load`]), its
//!   fixed routes as paths of nodes (`routes`);
//! - [`inline`]: a TOML file made self-contained as text, comments kept;
//! - [`variable`]: the typed run variables, and the names no variable may take; `declared`:
//!   the file's own `[variables]` and the inline attributes (`"${name}"`) that read them;
//! - [`error`]: [`SystemError`], each error with where it is (file, line and column, path).
//!
//! Modules point one way: `spec` ← `schema` ← `resolve`, `read` ← `resolve`; `error` below
//! them all. Storage, HTTP and the UI read components and system files from here; running a
//! system (Rhai models and applications) is hetsim-scripting's.

mod declared;
pub mod error;
mod expand;
pub mod inline;
pub mod kernel;
pub mod models;
pub mod read;
pub mod resolve;
mod routes;
pub mod schema;
pub mod spec;
pub mod variable;

pub use error::SystemError;
pub use inline::self_contained_toml;
pub use kernel::{read_listing, KernelSpec, ParsedKernel};
pub use models::BUILTIN_MODELS;
pub use resolve::{load, load_with, number_attribute, resolve_text, ModelSource, Resolved, System};
pub use schema::{check_system, system_schema};
pub use spec::{
    BoardSpec, ClusterSpec, ComponentSpec, LinkSpec, ModelSpec, NodeSpec, RouteSpec, RoutingSpec, SystemFile,
    TopologyName,
};
pub use variable::{Variable, RESERVED_NAMES};
