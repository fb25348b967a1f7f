use hetsim_kernel::{cfg::Cfg, latency::*, parse, Arch};
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let listing = parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let k = &listing.kernels[0];
    let arch = k.arch.unwrap_or(Arch::MAXWELL);
    let cfg = Cfg::build(k).unwrap();
    let table = LatencyTable::for_arch(arch).unwrap();
    let trace = single_pass_trace(k, &cfg).unwrap();
    let mut p = CriticalPath::new(k, arch, &table);
    for &i in &trace {
        let t = p.push(i);
        println!("{t:8.2} {}", k.instructions[i]);
    }
    println!("end {}", p.finish());
    for l in 0..cfg.loops.len() {
        println!(
            "iter L{l} {}",
            iteration_latency(k, &cfg, &trace, l, arch, &table)
        );
    }
}
