// The node table's uniform copy and node_at(), with 32-bit reads: in the
// pose and mixer modules, and in the skin module on devices without
// wide reads (skin_io_wide.wgsl has the same with 64-bit reads). The host
// puts it before pose.wgsl.

// The first UNIFORM_HEAD entries of `nodes` again (the host zero-pads
// them).
@group(0) @binding(10) var<uniform> nodes_head: array<Node, UNIFORM_HEAD>;

// Node n: from the uniform copy for the first UNIFORM_HEAD nodes, from
// storage beyond.
fn node_at(n: u32) -> Node {
    var v = nodes_head[min(n, UNIFORM_HEAD - 1u)];
    if (!NODES_IN_HEAD && n >= UNIFORM_HEAD) {
        v = nodes[n];
    }
    return v;
}
