//! The steps that turn the device-free model into the tables the passes
//! read, and their results back: the instance table ([`instance`]), the
//! mixer's packed frame ([`mix`]) and a frame's flat results as
//! [`Poses`](crate::Poses) ([`poses`]). The model names none of their GPU types; the GPU objects
//! and the CPU twin read them.

pub(crate) mod blocks;
pub(crate) mod instance;
pub(crate) mod key_lookup;
pub(crate) mod library;
pub(crate) mod mix;
pub(crate) mod poses;
pub(crate) mod rig;
pub(crate) mod run_keys;
pub(crate) mod run_values;
pub(crate) mod sample;
