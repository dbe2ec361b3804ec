//! The WGSL overrides of every pipeline, typed: what the host knows of a
//! library and a rig, compiled into the kernels so that code no table needs
//! is left out. [`SampleOverrides::constants`] and
//! [`RigOverrides::constants`] are the only places their names are
//! written; `src/tests/layout.rs` checks each name against the overrides naga
//! finds in the module.

/// The sampler's overrides (`shaders/sample.wgsl`) of one dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SampleOverrides {
    /// The track group the dispatch samples (`GROUP`; `GROUP_ALL` in the
    /// reference plan).
    pub(crate) group: u32,
    /// log2 of the key textures' row width (`ROW_SHIFT`).
    pub(crate) row_shift: u32,
    /// Some track searches from a bucket table (`HAS_TABLE`).
    pub(crate) has_table: bool,
    /// Some track indexes uniformly spaced keys directly (`HAS_DIRECT`).
    pub(crate) has_direct: bool,
    /// The clip-blocks plan's block table fits its uniform head
    /// (`BLOCKS_IN_UNIFORM`).
    pub(crate) blocks_in_uniform: bool,
    /// The clip-blocks plan's row table fits its uniform head
    /// (`ROWS_IN_UNIFORM`).
    pub(crate) rows_in_uniform: bool,
    /// The group's rows per instance (`GROUP_ROWS`).
    pub(crate) group_rows: u32,
    /// Rows one invocation samples (`ROW_RUN`).
    pub(crate) row_run: u32,
    /// How the clip-blocks plan's rows find their keys (`RUN_KEYS`: 0 per
    /// row, 1 shared, 2 run table, 3 exact run table).
    pub(crate) run_keys: u32,
    /// Bits per run-table entry (`TABLE_BITS`).
    pub(crate) table_bits: u32,
    /// Texels per run-table bucket (`TABLE_TEXELS`).
    pub(crate) table_texels: u32,
    /// The first run-key texel (`RUN_BASE`).
    pub(crate) run_base: u64,
    /// Values read and written as `vec4`s (`ALIGNED4`).
    pub(crate) aligned4: bool,
    /// LINEAR rotation values stored key by key (`INTERLEAVED`).
    pub(crate) interleaved: bool,
    /// Rows per regular segment, computed from their first two
    /// (`REGULAR_SEGMENT`; 0: every row read).
    pub(crate) regular_segment: u32,
    /// The segments' search offsets computed too (`REGULAR_SEARCH`).
    pub(crate) regular_search: bool,
    /// The library is compressed: values are decoded from its packed
    /// words (`COMPRESSED`, `shaders/decode.wgsl`).
    pub(crate) compressed: bool,
    /// The library is compressed and every row of the dispatch has
    /// uniform key times: no search loop (`UNIFORM_TIMES`).
    pub(crate) uniform_times: bool,
    /// Some row of the dispatch has more than 4 components, or the
    /// library is not compressed (`WIDE_ROWS`, read by compressed
    /// pipelines only).
    pub(crate) wide_rows: bool,
    /// The encodings of the dispatch's compressed streams, bit `1 << e`
    /// for `ENC_*` value `e` (`ENCODINGS`; every bit where the library is
    /// not compressed): the decode computes only theirs.
    pub(crate) encodings: u32,
    /// A compressed library's block heads are read from their uniform
    /// copies (`HEADS_IN_UNIFORM`: clip-blocks on CPU adapters, at most
    /// `DECODE_HEAD` rows).
    pub(crate) heads_in_uniform: bool,
    /// The first word of a compressed library's verbatim tracks in its
    /// packed words (`VERBATIM_START`; `u32::MAX` for an uncompressed
    /// library).
    pub(crate) verbatim_start: u32,
}

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

impl SampleOverrides {
    /// The pipeline constants, by WGSL name.
    #[must_use]
    pub(crate) fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("GROUP", f64::from(self.group)),
            ("ROW_SHIFT", f64::from(self.row_shift)),
            ("HAS_TABLE", flag(self.has_table)),
            ("HAS_DIRECT", flag(self.has_direct)),
            ("BLOCKS_IN_UNIFORM", flag(self.blocks_in_uniform)),
            ("ROWS_IN_UNIFORM", flag(self.rows_in_uniform)),
            ("GROUP_ROWS", f64::from(self.group_rows.max(1))),
            ("ROW_RUN", f64::from(self.row_run)),
            ("RUN_KEYS", f64::from(self.run_keys)),
            ("TABLE_BITS", f64::from(self.table_bits.max(8))),
            ("TABLE_TEXELS", f64::from(self.table_texels.max(1))),
            ("RUN_BASE", self.run_base as f64),
            ("ALIGNED4", flag(self.aligned4)),
            ("INTERLEAVED", flag(self.interleaved)),
            ("REGULAR_SEGMENT", f64::from(self.regular_segment)),
            ("REGULAR_SEARCH", flag(self.regular_search)),
            ("COMPRESSED", flag(self.compressed)),
            ("UNIFORM_TIMES", flag(self.uniform_times)),
            ("WIDE_ROWS", flag(self.wide_rows)),
            ("ENCODINGS", f64::from(self.encodings)),
            ("HEADS_IN_UNIFORM", flag(self.heads_in_uniform)),
            ("VERBATIM_START", f64::from(self.verbatim_start)),
        ]
    }
}

/// The rig modules' overrides (`shaders/pose.wgsl`, and `skin.wgsl` for
/// the skin module): what the host knows of a rig's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RigOverrides {
    /// Every node's parent has a smaller index (`PARENTS_FIRST`): no
    /// ancestor is recomputed.
    pub(crate) parents_first: bool,
    /// The node table is read from its uniform copy (`NODES_IN_HEAD`).
    pub(crate) nodes_in_head: bool,
    /// The pose channels are read from their uniform copy
    /// (`CHANNELS_IN_HEAD`).
    pub(crate) channels_in_head: bool,
    /// The joint slots and inverse binds are read from their uniform
    /// copies (`JOINTS_IN_HEAD`).
    pub(crate) joints_in_head: bool,
    /// The rig's node, mesh and pointer-target counts (`NODE_COUNT`,
    /// `MESH_COUNT`, `POINTER_COUNT`), at least 1.
    pub(crate) counts: [u32; 3],
    /// Every skin's mesh-node inverse is the identity
    /// (`MESH_INVERSES_IDENTITY`).
    pub(crate) mesh_inverses_identity: bool,
    /// Every inverse bind matrix is affine (`INVERSE_BINDS_AFFINE`).
    pub(crate) inverse_binds_affine: bool,
    /// Every sampled rotation the pose channels name is 4-float aligned
    /// (`ROTATIONS_ALIGNED4`).
    pub(crate) rotations_aligned4: bool,
    /// Some pose channel animates a translation (`ANIMATED_TRANSLATIONS`)
    /// and a scale (`ANIMATED_SCALES`).
    pub(crate) animated: [bool; 2],
    /// The most joint slots of one node (`NODE_SLOTS`).
    pub(crate) node_slots: u32,
}

impl RigOverrides {
    /// The pipeline constants, by WGSL name: the first eight are the pose
    /// module's (every rig module has them), the others the skin
    /// module's.
    #[must_use]
    pub(crate) fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("NODES_IN_HEAD", flag(self.nodes_in_head)),
            ("CHANNELS_IN_HEAD", flag(self.channels_in_head)),
            ("NODE_COUNT", f64::from(self.counts[0].max(1))),
            ("MESH_COUNT", f64::from(self.counts[1].max(1))),
            ("POINTER_COUNT", f64::from(self.counts[2].max(1))),
            ("ROTATIONS_ALIGNED4", flag(self.rotations_aligned4)),
            ("ANIMATED_TRANSLATIONS", flag(self.animated[0])),
            ("ANIMATED_SCALES", flag(self.animated[1])),
            ("JOINTS_IN_HEAD", flag(self.joints_in_head)),
            ("PARENTS_FIRST", flag(self.parents_first)),
            ("MESH_INVERSES_IDENTITY", flag(self.mesh_inverses_identity)),
            ("NODE_SLOTS", f64::from(self.node_slots)),
            ("INVERSE_BINDS_AFFINE", flag(self.inverse_binds_affine)),
        ]
    }

    /// The constants a pass of `module` takes.
    #[must_use]
    pub(crate) fn constants_for(
        &self,
        module: super::passes::RigModule,
    ) -> Vec<(&'static str, f64)> {
        let mut all = self.constants();
        if module != super::passes::RigModule::Skin {
            all.truncate(8);
        }
        all
    }
}
