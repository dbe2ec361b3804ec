//! Device loss: how the crate's GPU objects learn that their device is
//! gone, so that every fallible call reports [`Error::DeviceLost`] instead
//! of writing into a dead device, waiting on it, or handing back the last
//! results it computed as if they were this frame's.
//!
//! wgpu marks a device invalid the moment it is lost (`Device::destroy`,
//! or a driver that reports a loss), refuses new work on it from then on,
//! and only later, once its queue is empty, releases its resources and
//! calls its lost callback. A frame loop that submits back to back never
//! lets the queue empty, so the release and the callback can be many
//! frames late; errors of a lost device are not reported to error scopes
//! (wgpu drops them). What a caller can see at once is that a request to
//! map a buffer is refused on the spot.
//!
//! So each object's [`Health`] owns a probe: a 4-byte buffer that no
//! submission uses, kept asking to be mapped. Every fallible call polls the
//! device once without blocking (which completes the previous request on a
//! live device), unmaps the probe and asks for it again: on a live device
//! the request waits for the next poll, on a lost one wgpu refuses it
//! before returning, and the probe's verdict turns lost for good. That
//! costs one unmap and one map request per call, with no wait and no
//! submission, and it sees a loss at the first call after it, however the
//! caller polls. The lost callback stays the application's: wgpu keeps one
//! per device, and a library that set it would silently replace it.
//! Clones of a health share the probe and the verdict; the crate's objects
//! on one device share one health where one owns the other (an animator's
//! stages, a ring made for it), and each other object's probe sees the
//! same invalid device at its next call.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Error, Result};

/// Whether `device` is lost, as the crate's objects see it: a new probe
/// asks to map a buffer, which wgpu refuses at once on a lost device
/// (from the moment of `Device::destroy` or the driver's loss, whatever
/// work is still queued).
#[must_use]
pub fn is_device_lost(device: &wgpu::Device) -> bool {
    Health::of(device).check("is_device_lost").is_err()
}

/// The probe's map request: none outstanding (the probe is unmapped).
const IDLE: u8 = 0;
/// A request waits for the device's next poll.
const PENDING: u8 = 1;
/// The last request was granted: the probe is mapped.
const MAPPED: u8 = 2;
/// A request was refused: the device is lost (for good).
const LOST: u8 = 3;

/// A GPU object's device and its probe: what every call that touches the
/// device checks first. Clones share the probe and the verdict.
#[derive(Debug, Clone)]
pub(crate) struct Health {
    inner: Arc<Probe>,
}

#[derive(Debug)]
struct Probe {
    device: wgpu::Device,
    /// 4 bytes, `MAP_READ | COPY_DST`, never used by a submission, so a
    /// request to map it is granted at the device's next poll.
    buffer: wgpu::Buffer,
    /// [`IDLE`], [`PENDING`], [`MAPPED`] or [`LOST`]; the map callback
    /// writes the outcome of a request.
    state: Arc<AtomicU8>,
    /// One caller at a time unmaps and asks again.
    arming: Mutex<()>,
}

impl Health {
    /// `device`'s health, with a probe of its own, asked for at once (so
    /// that a probe made on a lost device is lost from the start).
    pub(crate) fn of(device: &wgpu::Device) -> Health {
        // On a lost device the creation fails with an error wgpu drops;
        // any other error (none is expected of 4 bytes) is caught here,
        // and the probe's map request is then refused.
        let scopes = [
            device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
            device.push_error_scope(wgpu::ErrorFilter::Validation),
            device.push_error_scope(wgpu::ErrorFilter::Internal),
        ];
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("keyframe-gpu.device_probe"),
            size: wgpu::COPY_BUFFER_ALIGNMENT,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let health = Health {
            inner: Arc::new(Probe {
                device: device.clone(),
                buffer,
                state: Arc::new(AtomicU8::new(IDLE)),
                arming: Mutex::new(()),
            }),
        };
        // The first request inside the scopes too: a buffer made on a
        // lost device is invalid, and wgpu reports a request to map it as
        // a validation error as well as refusing it. The refusal makes the
        // verdict lost, so no later request is made of it.
        health.inner.arm();
        for scope in scopes.into_iter().rev() {
            let _ = pollster::block_on(scope.pop());
        }
        health
    }

    /// [`Error::DeviceLost`] once the device is lost. Polls it once
    /// without blocking first: never waits, and runs the wgpu callbacks
    /// that are due, mappings done among them.
    pub(crate) fn check(&self, during: &'static str) -> Result<()> {
        self.check_with(&self.inner.device, during)
    }

    /// [`check`](Self::check), polling `device` (the caller's handle to
    /// the same device).
    pub(crate) fn check_with(&self, device: &wgpu::Device, during: &'static str) -> Result<()> {
        if self.is_lost() {
            return Err(Error::DeviceLost { during });
        }
        // Poll never returns Timeout or WrongSubmissionIndex; a lost
        // device is seen through the probe.
        let _ = device.poll(wgpu::PollType::Poll);
        self.probe(during)
    }

    /// [`check`](Self::check) without the poll, for a caller that has just
    /// polled the device (through another object's check): asks for the
    /// probe again where the last request was granted.
    pub(crate) fn probe(&self, during: &'static str) -> Result<()> {
        self.inner.arm();
        self.known(during)
    }

    /// [`Error::DeviceLost`] when the device is known lost (a check of this
    /// health saw it), without polling or probing: for the calls that
    /// record, which neither wait nor allocate.
    pub(crate) fn known(&self, during: &'static str) -> Result<()> {
        if self.is_lost() {
            return Err(Error::DeviceLost { during });
        }
        Ok(())
    }

    /// Whether the device is known lost, without polling: for the calls
    /// that cannot fail (recording), which then record nothing.
    pub(crate) fn is_lost(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) == LOST
    }

    /// `error`, or [`Error::DeviceLost`] when the device is lost: what a
    /// failed creation, mapping or wait turns into. Polls once without
    /// blocking first.
    pub(crate) fn explain(&self, during: &'static str, error: Error) -> Error {
        match self.check(during) {
            Err(lost) => lost,
            Ok(()) => error,
        }
    }
}

impl Probe {
    /// Unmaps the probe where the last request was granted, then asks
    /// again where none is outstanding. A lost device refuses the request
    /// before `map_async` returns; a request still pending (no poll since
    /// the last one) is left to that poll.
    fn arm(&self) {
        let _one = self.arming.lock().unwrap_or_else(PoisonError::into_inner);
        if self.state.load(Ordering::Acquire) == MAPPED {
            // A mapped probe whose view is refused was released with the
            // device's resources (the queue emptied after a loss): lost,
            // and an unmap would be an error of its own.
            if self.buffer.slice(..).get_mapped_range().is_err() {
                self.state.store(LOST, Ordering::Release);
                return;
            }
            self.buffer.unmap();
            self.state.store(IDLE, Ordering::Release);
        }
        if self.state.load(Ordering::Acquire) != IDLE {
            return;
        }
        self.state.store(PENDING, Ordering::Release);
        let state = Arc::clone(&self.state);
        self.buffer
            .map_async(wgpu::MapMode::Read, .., move |outcome| match outcome {
                Ok(()) => {
                    let _ = state.compare_exchange(
                        PENDING,
                        MAPPED,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    );
                }
                Err(_) => state.store(LOST, Ordering::Release),
            });
    }
}
