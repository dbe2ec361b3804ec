//! The steps that turn the device-free model into the tables the passes
//! read: the instance table ([`instance`]) and the mixer's packed frame
//! ([`mix`]). The model names none of their GPU types; the GPU objects
//! and the CPU twin read them.

pub(crate) mod instance;
pub(crate) mod mix;
