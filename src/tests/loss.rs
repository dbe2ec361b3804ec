//! The device-loss probe (`src/gpu/loss.rs`): a loss is seen by the first
//! call after it, without any poll in between, on the backend
//! `WGPU_BACKEND` picks.

use super::common;
use crate::gpu::Health;
use crate::Error;

/// A probe whose last request was granted asks again at the next call;
/// after `Device::destroy` that request is refused before it returns, so
/// the call reports the loss though no poll has run since (wgpu releases a
/// lost device's resources, and calls its lost callback, only in a poll
/// that finds its queue empty).
#[test]
fn a_loss_is_seen_by_the_next_call_without_a_poll() {
    let Some(h) = common::gpu("a_loss_is_seen_by_the_next_call_without_a_poll") else {
        return;
    };
    let health = Health::of(&h.device);
    for _ in 0..3 {
        assert!(health.check("live").is_ok());
        assert!(h.device.poll(wgpu::PollType::wait_indefinitely()).is_ok());
    }
    assert!(!health.is_lost());
    h.device.destroy();
    match health.probe("after the loss") {
        Err(Error::DeviceLost { during }) => assert_eq!(during, "after the loss"),
        other => panic!("the first call after the loss: {other:?}"),
    }
    assert!(health.is_lost());
    // Sticky: every clone, and every later call, says so.
    let clone = health.clone();
    assert!(matches!(
        clone.known("later"),
        Err(Error::DeviceLost { .. })
    ));
    assert!(matches!(
        clone.check("later"),
        Err(Error::DeviceLost { .. })
    ));
    // A probe made on the lost device is lost from the start.
    assert!(Health::of(&h.device).is_lost());
}
