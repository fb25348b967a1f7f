//! hetsim-scripting: Rhai application and computational models (issue 3).
