//! Device loss: how the crate's GPU objects learn that their device is
//! gone, so that every fallible call reports [`Error::DeviceLost`] instead
//! of writing into a dead device, waiting on it, or handing back the last
//! results it computed as if they were this frame's.
//!
//! wgpu finds a loss inside a poll of the device: after
//! `Device::destroy`, the first poll that finds the queue empty releases
//! every resource of the device and calls its lost callback; a driver
//! that loses the device marks it lost at once, and its resources go the
//! same way once its queue is empty. Errors of a lost device are not
//! reported to error scopes: wgpu drops them.
//!
//! Each object's [`Health`] owns a probe, a 4-byte buffer mapped when it
//! is created and never unmapped. Every fallible call polls the device
//! once without blocking, then asks for a view of the probe: a released
//! buffer refuses it. That is the moment the lost callback runs, seen
//! without the callback, which the crate leaves to the application: wgpu
//! keeps one lost callback per device, so a library that set it would
//! silently replace the application's, and wgpu's device identity (the id
//! that `Device`'s `Eq` and `Hash` compare) repeats across instances, so
//! a table of devices to share one callback would confuse a new device
//! with a lost one. A probe made on a device already lost is invalid from
//! the start, so objects made on it are refused at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Error, Result};

/// Whether `device` is lost, as the crate's objects see it: polls it once
/// without blocking, then probes it (a buffer made and mapped on a lost
/// device is invalid; the resources of a destroyed device are released
/// once the work queued before the loss is done). A device destroyed with
/// work queued reads as lost from its creation of a probe on, so this
/// answers `true` at once after `Device::destroy`; an object made before
/// the loss sees it once that work is done.
#[must_use]
pub fn is_device_lost(device: &wgpu::Device) -> bool {
    Health::of(device).check("is_device_lost").is_err()
}

/// A GPU object's device and its probe: what every call that touches the
/// device checks first. Clones share the probe and the verdict.
#[derive(Debug, Clone)]
pub(crate) struct Health {
    inner: Arc<Probe>,
}

#[derive(Debug)]
struct Probe {
    device: wgpu::Device,
    /// Mapped at creation, never unmapped: a view of it is refused once
    /// wgpu has released the device's resources (or from the start, made
    /// on a lost device).
    buffer: wgpu::Buffer,
    /// The verdict, once lost (a loss is for good).
    lost: AtomicBool,
    /// One view of the probe at a time.
    viewing: Mutex<()>,
}

impl Health {
    /// `device`'s health, with a probe of its own.
    pub(crate) fn of(device: &wgpu::Device) -> Health {
        // On a lost device the creation fails with an error wgpu drops;
        // any other error (none is expected of 4 bytes) is caught here,
        // and the probe's view then reports the buffer invalid.
        let scopes = [
            device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
            device.push_error_scope(wgpu::ErrorFilter::Validation),
            device.push_error_scope(wgpu::ErrorFilter::Internal),
        ];
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("keyframe-gpu.device_probe"),
            size: wgpu::COPY_BUFFER_ALIGNMENT,
            usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: true,
        });
        for scope in scopes.into_iter().rev() {
            let _ = pollster::block_on(scope.pop());
        }
        Health {
            inner: Arc::new(Probe {
                device: device.clone(),
                buffer,
                lost: AtomicBool::new(false),
                viewing: Mutex::new(()),
            }),
        }
    }

    /// [`Error::DeviceLost`] once the device is lost. Polls it once
    /// without blocking first: never waits (a device destroyed with work
    /// queued is reported by the first call after that work is done, and a
    /// blocking readback waits for it), and runs the wgpu callbacks that
    /// are due, mappings done among them.
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
    /// polled the device (through another object's check).
    pub(crate) fn probe(&self, during: &'static str) -> Result<()> {
        let p = &self.inner;
        if p.lost.load(Ordering::Acquire) {
            return Err(Error::DeviceLost { during });
        }
        let released = {
            let _one = p.viewing.lock().unwrap_or_else(PoisonError::into_inner);
            p.buffer.slice(..).get_mapped_range().is_err()
        };
        if released {
            p.lost.store(true, Ordering::Release);
            return Err(Error::DeviceLost { during });
        }
        Ok(())
    }

    /// [`Error::DeviceLost`] when the device is known lost (a check of this
    /// health saw it), without polling or probing: for the per-frame
    /// calls that record, which neither wait nor allocate.
    pub(crate) fn known(&self, during: &'static str) -> Result<()> {
        if self.is_lost() {
            return Err(Error::DeviceLost { during });
        }
        Ok(())
    }

    /// Whether the device is known lost, without polling: for the calls
    /// that cannot fail (recording), which then record nothing.
    pub(crate) fn is_lost(&self) -> bool {
        self.inner.lost.load(Ordering::Acquire)
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
