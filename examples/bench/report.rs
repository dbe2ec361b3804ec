//! The table and the JSON lines: their format and keys are what
//! docs/PERFORMANCE.md and the scripts read; keep them.

use crate::gpu::Gpu;
use crate::run::Measured;

impl Measured {
    pub fn json(&self, gpu: &Gpu) -> String {
        format!(
            "{{\"workload\": {}, \"samples\": {}, \"gpu_ms\": {}, \"gpu_readback_ms\": {}, \
             \"floor_ms\": {}, \"tables_ms\": {}, \"cpu_ms\": {}, \"gpu_over_floor\": {}, \
             \"gpu_over_tables\": {}, \"cpu_over_gpu\": {}, \"adapter\": {}, \"backend\": {}, \"plan\": \"{:?}\", \"dispatches\": {}{}}}",
            serde_json::Value::from(self.name.as_str()),
            self.samples,
            num(self.gpu_ms),
            num(self.gpu_readback_ms),
            num(self.floor_ms),
            num(self.tables_ms),
            num(self.cpu_ms),
            num(self.gpu_over_floor),
            num(self.gpu_over_tables),
            num(self.cpu_ms / self.gpu_ms),
            serde_json::Value::from(gpu.adapter.as_str()),
            serde_json::Value::from(gpu.backend.as_str()),
            self.plan,
            serde_json::Value::from(self.dispatches.clone()),
            match (self.sample_ms, self.skin_strategy) {
                (Some(ms), Some(st)) => format!(
                    ", \"sample_ms\": {}, \"chain_over_sampling\": {}, \"skin_strategy\": \"{st:?}\"",
                    num(ms),
                    num(self.chain_over_sampling.unwrap_or(self.gpu_ms / ms))
                ),
                (Some(ms), None) => format!(", \"sample_ms\": {}", num(ms)),
                _ => String::new(),
            }
        )
    }
}

/// A JSON number (null if not finite), 6 significant digits.
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{}", format!("{x:.6e}").parse::<f64>().unwrap_or(x))
    } else {
        "null".into()
    }
}

pub fn print_table(out: &mut dyn std::io::Write, gpu: &Gpu, results: &[Measured]) {
    let _ = writeln!(
        out,
        "{:<20} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9} {:>9} {:>8} {:>7} {:>7} {:>9} {:>9}",
        "workload",
        "samples",
        "gpu_ms",
        "wall_ms",
        "+readback",
        "floor_ms",
        "tbl_ms",
        "cpu_ms",
        "gpu/floor",
        "gpu/tbl",
        "cpu/gpu",
        "ns/sample",
        "max|err|"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<20} {:>9} {:>9.3} {:>9.3} {:>10.3} {:>9.3} {:>9.3} {:>9.3} {:>9.2} {:>8.2} {:>7.2} {:>9.2} {:>9.1e}",
            r.name,
            r.samples,
            r.gpu_ms,
            r.gpu_wall_ms,
            r.gpu_readback_ms,
            r.floor_ms,
            r.tables_ms,
            r.cpu_ms,
            r.gpu_over_floor,
            r.gpu_over_tables,
            r.cpu_ms / r.gpu_ms,
            r.gpu_ms * 1e6 / r.samples as f64,
            r.max_abs_err
        );
        if let Some(ms) = r.sample_ms {
            let _ = writeln!(
                out,
                "{:<20} sampling pass alone {:.3} ms; whole chain / sampling = {:.2}, skin pass {:?} \
                 (floor, tables and ns/sample refer to the sampling shape; max|err| to joint matrices)",
                "",
                ms,
                r.chain_over_sampling.unwrap_or(r.gpu_ms / ms),
                r.skin_strategy.unwrap_or_default()
            );
        }
    }
    let _ = writeln!(
        out,
        "\nheap allocations per frame (median, steady state), sampler frames:\n\
         {:<20} {:>14} {:>22} {:>13} {:>10}",
        "workload", "set_instances", "encoder+record+finish", "submit+wait", "cpu frame"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<20} {:>14} {:>22} {:>13} {:>10}",
            r.name, r.allocs[0], r.allocs[1], r.allocs[2], r.allocs[3]
        );
    }
    let _ = writeln!(
        out,
        "(counted by the bench's global allocator: everything, wgpu included; \
         see tests/no_alloc.rs for what the crate itself does)\n\ntiming: {}; adapter: {} ({})\n\
         +readback (gpu_readback_ms): wall time of one steady-state frame that also reads its \
         results back, pipelined through a two-slot gpu::ReadbackRing (submit frame N, then \
         read frame N-1 into a reused Vec; skin_chain: joint matrices)",
        gpu.timing(),
        gpu.adapter,
        gpu.backend
    );
}
