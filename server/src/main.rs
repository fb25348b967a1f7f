//! `hetsim`: simulate parallel applications on heterogeneous hardware.

fn main() -> std::process::ExitCode {
    hetsim_server::main()
}
