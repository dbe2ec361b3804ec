//! [`ReadbackRing`]: reading results back without stalling the next frame.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result, RingError};

use super::{scoped, AnimatorChunk, Health};

/// The most slots a ring may have ([`ReadbackRing::new`]).
pub const MAX_SLOTS: usize = 16;

const PENDING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;

/// Names one recorded frame of a [`ReadbackRing`]: pass it to
/// [`map`](ReadbackRing::map) after submitting the encoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "the frame must be mapped (ReadbackRing::map) or discarded"]
pub struct Ticket {
    frame: u64,
    slot: usize,
}

impl Ticket {
    /// The frame number: 0 for the first frame the ring recorded, then 1,
    /// 2... (never reused, a discarded frame's number included).
    #[must_use]
    pub fn frame(&self) -> u64 {
        self.frame
    }
}

/// What [`try_read`](ReadbackRing::try_read) and
/// [`wait`](ReadbackRing::wait) wrote into the caller's vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadbackFrame {
    /// The frame number ([`Ticket::frame`]).
    pub frame: u64,
    /// The instance count of that frame ([`ReadbackRing::record`]), or the
    /// count given to [`ReadbackRing::record_buffer`].
    pub count: u32,
    /// Floats written (`count * output_stride` for [`ReadbackRing::record`]).
    pub len: usize,
}

#[derive(Debug)]
enum State {
    Free,
    Recorded,
    Mapping(wgpu::SubmissionIndex),
}

#[derive(Debug)]
struct Slot {
    buffer: wgpu::Buffer,
    state: State,
    frame: u64,
    bytes: u64,
    count: u32,
    /// Set by the `map_async` callback: [`PENDING`], [`MAPPED`] or [`FAILED`].
    done: Arc<AtomicU8>,
}

/// A ring of staging buffers for reading GPU results back without
/// stalling the next frame.
///
/// [`Animator::read_back`](super::Animator::read_back) submits a copy and
/// blocks until the GPU has finished everything queued: the host waits for
/// the frame it just submitted. A [`ReadbackRing`] instead owns a few
/// staging buffers (created once) and lets frame `N`'s copy be mapped while
/// frame `N + 1` is recorded and submitted:
///
/// 1. [`record`](ReadbackRing::record) (after the animator's own `record`,
///    in the same encoder) copies a chunk's sampled values into the next
///    free staging buffer and returns a [`Ticket`] naming the frame;
/// 2. after `queue.submit`, [`map`](ReadbackRing::map) starts mapping that
///    buffer (`map_async`), given the submission index;
/// 3. [`try_read`](ReadbackRing::try_read) polls the device without blocking
///    and, once the oldest frame's mapping is done, copies it into the
///    caller's `Vec<f32>` and frees the slot; [`wait`](ReadbackRing::wait)
///    blocks until the oldest frame's submission is done (for the last frame,
///    or when every slot is in flight).
///
/// Frames come back in the order they were recorded, each with its frame
/// number and instance count ([`ReadbackFrame`]). The ring never overwrites
/// a slot that is still in flight: when every slot holds a frame not yet
/// read, `record` records nothing and returns
/// [`RingError::Full`]; read (or [`wait`](ReadbackRing::wait) for) the oldest
/// frame to free a slot.
///
/// Per frame the ring creates no buffer, bind group or encoder, and itself
/// allocates nothing on the heap once the caller's `Vec` has the capacity;
/// wgpu allocates inside `map_async` (it boxes the callback), `poll`, the
/// mapped view and `unmap` (tests/readback_ring.rs counts them).
///
/// Once the device is lost, [`try_read`](ReadbackRing::try_read) and
/// [`wait`](ReadbackRing::wait) return
/// [`Error::DeviceLost`] and no frame comes back,
/// not even one whose copy finished before the loss: after a loss the
/// caller rebuilds, and a late frame would pass for a current one. The
/// per-frame steps that neither poll nor allocate (`record`, `map`,
/// `discard`) return it once the loss is known.
///
/// The ring is not tied to the sampled values:
/// [`record_buffer`](ReadbackRing::record_buffer) copies any buffer with
/// `COPY_SRC` usage, for example a chunk's
/// [`joint_matrix_buffer`](super::AnimatorChunk::joint_matrix_buffer).
///
/// ```no_run
/// use keyframe_gpu::gpu::ReadbackRing;
/// use keyframe_gpu::{AnimationLibrary, Animator, Clip, Instance, Interpolation, Property, Track};
/// # fn f(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(), keyframe_gpu::Error> {
/// let track = Track::new(0, Property::Translation, Interpolation::Linear,
///     vec![0.0, 1.0], vec![0.0, 0.0, 0.0, 2.0, 4.0, 6.0]);
/// let library = AnimationLibrary::new(vec![Clip::new("move", vec![track])])?;
/// let mut animator = Animator::sampler_only(device, queue, &library, 1024)?;
/// // 1,024 instances fit one chunk on any device the crate accepts.
/// let mut ring = ReadbackRing::for_chunk(device, &animator.chunks()[0], 2)?;
/// let mut out = Vec::with_capacity(1024 * library.output_stride() as usize);
/// for frame in 0..10u32 {
///     animator.set_instances(queue, &[Instance::new(0, f64::from(frame) / 60.0)])?;
///     let mut encoder = device.create_command_encoder(&Default::default());
///     animator.record(&mut encoder);
///     let ticket = ring.record(&mut encoder, &animator.chunks()[0])?;
///     let submission = queue.submit([encoder.finish()]);
///     ring.map(ticket, submission)?;
///     // Frame N-1's data, if its copy has finished; never blocks.
///     while let Some(done) = ring.try_read(device, &mut out)? {
///         assert_eq!(out.len(), done.count as usize * library.output_stride() as usize);
///     }
/// }
/// // The frames still in flight, in order.
/// while let Some(done) = ring.wait(device, &mut out)? {
///     let _ = (done.frame, &out);
/// }
/// # Ok(()) }
/// ```
///
/// Full ring: [`record`](Self::record) returns [`RingError::Full`] and
/// records nothing; it never overwrites a frame that was not read.
#[derive(Debug)]
pub struct ReadbackRing {
    /// The device, to tell whether it is lost.
    health: Health,
    slots: Vec<Slot>,
    slot_bytes: u64,
    /// Slot of the oldest frame in flight.
    head: usize,
    /// Frames recorded and not read yet (contiguous from `head`).
    in_flight: usize,
    next_frame: u64,
}

impl ReadbackRing {
    /// A ring of `slots` staging buffers of `slot_bytes` bytes each (rounded
    /// up to a multiple of 4), created now and reused for every frame.
    ///
    /// # Errors
    /// [`RingError::SlotCount`] unless `1 <= slots <= MAX_SLOTS`;
    /// [`Error::LimitExceeded`] when a buffer would pass the device's
    /// `max_buffer_size`; [`Error::Gpu`] or [`Error::OutOfMemory`] when
    /// wgpu reports an error; [`Error::DeviceLost`] on a lost device.
    pub fn new(device: &wgpu::Device, slot_bytes: u64, slots: usize) -> Result<Self> {
        Self::with_health(Health::of(device), device, slot_bytes, slots)
    }

    /// [`new`](Self::new), telling a loss of the device by `health`.
    fn with_health(
        health: Health,
        device: &wgpu::Device,
        slot_bytes: u64,
        slots: usize,
    ) -> Result<Self> {
        health.check("ReadbackRing::new")?;
        if slots == 0 || slots > MAX_SLOTS {
            return Err(RingError::SlotCount {
                requested: slots,
                max: MAX_SLOTS,
            }
            .into());
        }
        let align = wgpu::COPY_BUFFER_ALIGNMENT;
        let size = slot_bytes.div_ceil(align).max(1) * align;
        let limit = device.limits().max_buffer_size;
        if size > limit {
            return Err(Error::LimitExceeded {
                what: "readback staging buffer",
                needed: size,
                limit_name: "max_buffer_size",
                limit,
            });
        }
        let slots = scoped(device, "ReadbackRing::new", || {
            (0..slots)
                .map(|_| Slot {
                    buffer: device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("keyframe-gpu.readback_ring"),
                        size,
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    }),
                    state: State::Free,
                    frame: 0,
                    bytes: 0,
                    count: 0,
                    done: Arc::new(AtomicU8::new(PENDING)),
                })
                .collect()
        })?;
        Ok(ReadbackRing {
            health,
            slots,
            slot_bytes: size,
            head: 0,
            in_flight: 0,
            next_frame: 0,
        })
    }

    /// A ring sized for `chunk`'s sampled values at its full capacity
    /// (`output_stride` floats per sampled row: one row per instance, two
    /// per action slot with a mixer): an animator's chunk
    /// ([`Animator::chunks`](super::Animator::chunks); `chunks()[0]` of an
    /// animator that fits one). It learns of a loss of the device with the
    /// animator: after the animator has seen it,
    /// [`record`](Self::record) refuses too.
    ///
    /// # Errors
    /// Those of [`new`](Self::new).
    pub fn for_chunk(device: &wgpu::Device, chunk: &AnimatorChunk, slots: usize) -> Result<Self> {
        let bytes = chunk.sample_capacity_bytes();
        Self::with_health(chunk.health().clone(), device, bytes, slots)
    }

    /// Number of slots.
    #[must_use]
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Bytes of one slot.
    #[must_use]
    pub fn slot_bytes(&self) -> u64 {
        self.slot_bytes
    }

    /// Frames recorded and not read (or discarded) yet.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Records the copy of `chunk`'s current sampled values (rows *
    /// `output_stride` floats, a row per instance of the chunk; the row
    /// count is handed back in [`ReadbackFrame::count`]) into the next free
    /// slot. Call it after the animator's
    /// [`record`](super::Animator::record) in the same encoder, with no
    /// `set_instances` in between, then submit the encoder and
    /// [`map`](Self::map) the ticket.
    ///
    /// # Errors
    /// [`RingError::Full`] when every slot is in flight (nothing is
    /// recorded); [`RingError::BadCopy`] when the sampled values do not
    /// fit a slot (a ring made for a smaller chunk);
    /// [`Error::DeviceLost`] once the device is lost
    /// ([`record_buffer`](Self::record_buffer)).
    pub fn record(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        chunk: &AnimatorChunk,
    ) -> Result<Ticket> {
        let count = chunk.sample_rows();
        let bytes = u64::from(count) * u64::from(chunk.library().output_stride()) * 4;
        self.record_buffer(encoder, chunk.sample_buffer(), bytes, count)
    }

    /// Records the copy of `source[..bytes]` into the next free slot; `count`
    /// is handed back in [`ReadbackFrame::count`] (for example an instance
    /// count).
    ///
    /// # Errors
    /// [`RingError::Full`] when every slot is in flight;
    /// [`RingError::BadCopy`] when `bytes` is past the slot or the source, or
    /// not a multiple of 4, or `source` lacks `COPY_SRC` usage. Nothing is
    /// recorded on error. [`Error::DeviceLost`] once the device is lost:
    /// the ring's probe asks wgpu again without polling (a ring made with
    /// [`for_chunk`](Self::for_chunk) shares the animator's, so a
    /// loss its animator saw this frame is reported here too), and a frame
    /// recorded after a loss never comes back.
    pub fn record_buffer(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        source: &wgpu::Buffer,
        bytes: u64,
        count: u32,
    ) -> Result<Ticket> {
        self.health.probe("ReadbackRing::record")?;
        let bad = |reason| {
            Err(RingError::BadCopy {
                bytes,
                slot_bytes: self.slot_bytes,
                reason,
            }
            .into())
        };
        if bytes > self.slot_bytes {
            return bad("larger than a slot");
        }
        if bytes > source.size() {
            return bad("longer than the source buffer");
        }
        if !bytes.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT) {
            return bad("not a multiple of 4 bytes");
        }
        if bytes > 0 && !source.usage().contains(wgpu::BufferUsages::COPY_SRC) {
            return bad("the source buffer has no COPY_SRC usage");
        }
        if self.in_flight == self.slots.len() {
            return Err(RingError::Full {
                slots: self.slots.len(),
                oldest_frame: self.slots[self.head].frame,
            }
            .into());
        }
        let index = (self.head + self.in_flight) % self.slots.len();
        let frame = self.next_frame;
        let slot = &mut self.slots[index];
        if bytes > 0 {
            encoder.copy_buffer_to_buffer(source, 0, &slot.buffer, 0, bytes);
        }
        slot.state = State::Recorded;
        slot.frame = frame;
        slot.bytes = bytes;
        slot.count = count;
        self.in_flight += 1;
        self.next_frame += 1;
        Ok(Ticket { frame, slot: index })
    }

    /// Starts mapping the ticket's slot (`map_async`). Call it once the
    /// encoder that recorded the ticket was submitted, with the index that
    /// `queue.submit` returned ([`wait`](Self::wait) waits for exactly that
    /// submission). Mapping before that submit would make the submit fail
    /// wgpu's validation (the slot would be used while mapped); needing the
    /// submit's index guards against that order.
    ///
    /// # Errors
    /// [`RingError::NotRecorded`] when the ticket's frame is not recorded and
    /// unmapped in this ring; [`Error::DeviceLost`] once the ring knows
    /// the device lost (its [`record_buffer`](Self::record_buffer) of the
    /// same frame asked; mapping adds no request of its own, and a mapping
    /// of a lost device fails, which reading it reports).
    pub fn map(&mut self, ticket: Ticket, submission: wgpu::SubmissionIndex) -> Result<()> {
        self.health.known("ReadbackRing::map")?;
        let Some(slot) = self
            .slots
            .get_mut(ticket.slot)
            .filter(|s| matches!(s.state, State::Recorded) && s.frame == ticket.frame)
        else {
            return Err(RingError::NotRecorded {
                frame: ticket.frame,
            }
            .into());
        };
        if slot.bytes == 0 {
            slot.done.store(MAPPED, Ordering::Release);
        } else {
            slot.done.store(PENDING, Ordering::Release);
            let done = Arc::clone(&slot.done);
            slot.buffer
                .slice(..slot.bytes)
                .map_async(wgpu::MapMode::Read, move |r| {
                    done.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
                });
        }
        slot.state = State::Mapping(submission);
        Ok(())
    }

    /// Frees the newest frame, recorded but not mapped, for an encoder that
    /// was dropped instead of submitted.
    ///
    /// # Errors
    /// [`RingError::NotRecorded`] or [`RingError::NotNewest`];
    /// [`Error::DeviceLost`] once the ring knows the device lost (as
    /// [`map`](Self::map)).
    pub fn discard(&mut self, ticket: Ticket) -> Result<()> {
        self.health.known("ReadbackRing::discard")?;
        match self.slots.get(ticket.slot) {
            Some(s) if matches!(s.state, State::Recorded) && s.frame == ticket.frame => {}
            _ => {
                return Err(RingError::NotRecorded {
                    frame: ticket.frame,
                }
                .into())
            }
        }
        if ticket.frame + 1 != self.next_frame {
            return Err(RingError::NotNewest {
                frame: ticket.frame,
            }
            .into());
        }
        self.slots[ticket.slot].state = State::Free;
        self.in_flight -= 1;
        Ok(())
    }

    /// Polls the device once without blocking (`PollType::Poll`); if the
    /// oldest frame in flight is mapped, replaces `out`'s contents with its
    /// floats, frees its slot and returns which frame it was. `Ok(None)`
    /// when nothing is in flight, or the oldest frame is not mapped yet (or
    /// not [`map`](Self::map)ped at all).
    ///
    /// `out` does not allocate once its capacity holds a slot's floats.
    ///
    /// # Errors
    /// [`Error::Readback`] when polling or the mapping failed (the frame is
    /// dropped and its slot freed); [`Error::DeviceLost`] once the device
    /// is lost (`out` is left as it was).
    pub fn try_read(
        &mut self,
        device: &wgpu::Device,
        out: &mut Vec<f32>,
    ) -> Result<Option<ReadbackFrame>> {
        // Polls `device` once without blocking: the mappings that are done
        // complete, and a loss is seen.
        self.health.check_with(device, "ReadbackRing::try_read")?;
        if self.in_flight == 0 {
            return Ok(None);
        }
        if !matches!(self.slots[self.head].state, State::Mapping(_)) {
            return Ok(None);
        }
        self.take_oldest(out)
    }

    /// Blocks until the oldest frame in flight is mapped (waiting for its
    /// submission, not for later ones), then reads it like
    /// [`try_read`](Self::try_read). `Ok(None)` when nothing is in flight.
    ///
    /// # Errors
    /// [`RingError::NotMapped`] when the oldest frame was never mapped;
    /// [`Error::Readback`] when waiting or the mapping failed (the frame is
    /// dropped and its slot freed); [`Error::DeviceLost`] once the device
    /// is lost (`out` is left as it was). The wait cannot hang on a lost
    /// device: wgpu's wait returns once the work queued before the loss is
    /// done.
    pub fn wait(
        &mut self,
        device: &wgpu::Device,
        out: &mut Vec<f32>,
    ) -> Result<Option<ReadbackFrame>> {
        const DURING: &str = "ReadbackRing::wait";
        self.health.check(DURING)?;
        if self.in_flight == 0 {
            return Ok(None);
        }
        let slot = &self.slots[self.head];
        let State::Mapping(submission) = &slot.state else {
            return Err(RingError::NotMapped { frame: slot.frame }.into());
        };
        let failed =
            |e: wgpu::PollError| self.health.explain(DURING, Error::Readback(e.to_string()));
        if slot.done.load(Ordering::Acquire) == PENDING {
            device
                .poll(wgpu::PollType::Wait {
                    submission_index: Some(submission.clone()),
                    timeout: None,
                })
                .map_err(failed)?;
        }
        if self.slots[self.head].done.load(Ordering::Acquire) == PENDING {
            // The submission is done; its mapping callback runs on the next
            // poll at the latest.
            device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(failed)?;
        }
        // A loss during the wait: no frame after it.
        self.health.check(DURING)?;
        match self.take_oldest(out)? {
            Some(f) => Ok(Some(f)),
            None => Err(Error::Readback(format!(
                "frame {} was not mapped after its submission completed",
                self.slots[self.head].frame
            ))),
        }
    }

    /// Reads the oldest slot if its mapping is done.
    fn take_oldest(&mut self, out: &mut Vec<f32>) -> Result<Option<ReadbackFrame>> {
        let slot = &mut self.slots[self.head];
        let result = match slot.done.load(Ordering::Acquire) {
            PENDING => return Ok(None),
            MAPPED => {
                out.clear();
                if slot.bytes > 0 {
                    let copied = match slot.buffer.slice(..slot.bytes).get_mapped_range() {
                        Ok(view) => {
                            extend_f32(out, &view);
                            Ok(())
                        }
                        Err(e) => Err(Error::Readback(e.to_string())),
                    };
                    slot.buffer.unmap();
                    copied
                } else {
                    Ok(())
                }
            }
            _ => Err(Error::Readback(format!(
                "mapping the readback slot of frame {} failed",
                slot.frame
            ))),
        };
        let frame = ReadbackFrame {
            frame: slot.frame,
            count: slot.count,
            len: out.len(),
        };
        slot.state = State::Free;
        slot.done.store(PENDING, Ordering::Release);
        self.head = (self.head + 1) % self.slots.len();
        self.in_flight -= 1;
        result.map(|()| Some(frame))
    }
}

/// Appends the native-endian `f32`s of `bytes` (a multiple of 4 long).
fn extend_f32(out: &mut Vec<f32>, bytes: &[u8]) {
    match bytemuck::try_cast_slice::<u8, f32>(bytes) {
        Ok(floats) => out.extend_from_slice(floats),
        Err(_) => out.extend(
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
        ),
    }
}
