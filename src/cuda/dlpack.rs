//! The producer's side of `__dlpack__(stream=...)` for device tensors: the consumer names the
//! stream it will use the memory on, and that stream must not run ahead of the work the
//! producer has queued on its own current stream.
//!
//! Stream values (DLPack's Python specification, CUDA): `None` means the legacy default stream
//! (the binding passes 1); -1 means "no synchronization" (the consumer synchronizes itself);
//! 0 is forbidden (ambiguous); 1 is the legacy default stream; 2 is the per-thread default
//! stream; anything else is a `cudaStream_t` of the same device and context.
//!
//! The ordering is an event recorded on the producer's stream that the consumer's stream waits
//! for: the host never blocks, and the rest of the device is not synchronized.

use super::gpu::Gpu;
use super::runtime;
use crate::core::error::{Error, Result};

/// `CU_STREAM_PER_THREAD`: the handle of the calling thread's default stream.
const PER_THREAD: u64 = 2;

/// The stream the consumer will use (a backend stream id; 0 is the legacy default stream), or
/// None when it asked for no synchronization.
pub fn consumer_stream(stream: i64) -> Result<Option<u64>> {
    match stream {
        -1 => Ok(None),
        0 => Err(Error::invalid(
            "DLPack stream 0 is ambiguous and not allowed: pass 1 (legacy default stream), 2 (per-thread default \
             stream), -1 (no synchronization) or a cudaStream_t",
        )
        .at_arg(2)),
        // The legacy default stream is stream 0 of the backend.
        1 => Ok(Some(0)),
        PER_THREAD_I64 => Ok(Some(PER_THREAD)),
        s if s < 0 => {
            Err(Error::invalid(format!("DLPack stream {s} is not a CUDA stream (-1 means no synchronization)"))
                .at_arg(2))
        }
        s => Ok(Some(s as u64)),
    }
}

const PER_THREAD_I64: i64 = PER_THREAD as i64;

/// Makes `consumer` wait for what is queued on `producer` so far (nothing to do when they are
/// the same stream: a stream runs in order).
pub fn order(gpu: &dyn Gpu, producer: u64, consumer: u64) -> Result<()> {
    if producer == consumer {
        return Ok(());
    }
    let event = gpu.event_record(producer)?;
    let r = gpu.stream_wait(consumer, event);
    // Destroying an event that a stream waits on is allowed: the wait keeps what it needs.
    gpu.event_free(event);
    r
}

/// The producer side of `__dlpack__(stream=stream)` for memory on `device`: the consumer's
/// stream waits for this thread's current stream of `device`.
pub fn sync(device: i32, stream: i64) -> Result<()> {
    let dev = runtime::device(device).map_err(|e| e.at_arg(1))?;
    match consumer_stream(stream)? {
        None => Ok(()),
        Some(consumer) => order(dev.gpu.as_ref(), runtime::stream(device), consumer),
    }
}

#[cfg(all(test, feature = "cuda-emulator"))]
#[path = "dlpack_tests.rs"]
mod emu_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::gpu::{DeviceInfo, LaunchCfg};
    use std::ffi::c_void;
    use std::sync::Mutex;

    /// A device that only records the stream and event calls made on it.
    struct Recorder {
        info: DeviceInfo,
        calls: Mutex<Vec<String>>,
    }

    impl Recorder {
        fn new() -> Self {
            let info = DeviceInfo { name: "recorder".into(), arch: (9, 0), total_mem: 0, multiprocessors: 1 };
            Recorder { info, calls: Mutex::new(Vec::new()) }
        }
        fn log(&self, s: String) {
            self.calls.lock().unwrap().push(s);
        }
        fn calls(&self) -> Vec<String> {
            self.calls.lock().unwrap().clone()
        }
    }

    fn unused<T>() -> Result<T> {
        Err(Error::invalid("not used by these tests"))
    }

    impl Gpu for Recorder {
        fn info(&self) -> &DeviceInfo {
            &self.info
        }
        fn mem_info(&self) -> Result<(usize, usize)> {
            unused()
        }
        fn malloc(&self, _: usize) -> Result<u64> {
            unused()
        }
        fn free(&self, _: u64) -> Result<()> {
            unused()
        }
        fn malloc_host(&self, _: usize) -> Result<*mut u8> {
            unused()
        }
        fn free_host(&self, _: *mut u8) -> Result<()> {
            unused()
        }
        unsafe fn htod(&self, _: u64, _: *const u8, _: usize, _: u64) -> Result<()> {
            unused()
        }
        unsafe fn dtoh(&self, _: *mut u8, _: u64, _: usize, _: u64) -> Result<()> {
            unused()
        }
        unsafe fn dtod(&self, _: u64, _: u64, _: usize, _: u64) -> Result<()> {
            unused()
        }
        unsafe fn gemm(&self, _: &crate::cuda::gpu::GemmCall, _: u64) -> Result<()> {
            unused()
        }
        unsafe fn memset(&self, _: u64, _: u8, _: usize, _: u64) -> Result<()> {
            unused()
        }
        unsafe fn launch(&self, _: &str, _: &LaunchCfg, _: &mut [*mut c_void], _: u64) -> Result<()> {
            unused()
        }
        fn stream_new(&self, _: bool, _: i32) -> Result<u64> {
            unused()
        }
        fn stream_free(&self, _: u64) -> Result<()> {
            unused()
        }
        fn stream_sync(&self, s: u64) -> Result<()> {
            self.log(format!("stream_sync {s}"));
            Ok(())
        }
        fn stream_wait(&self, s: u64, e: u64) -> Result<()> {
            self.log(format!("wait {s} on event {e}"));
            Ok(())
        }
        fn event_record(&self, s: u64) -> Result<u64> {
            self.log(format!("record on {s}"));
            Ok(77)
        }
        fn event_done(&self, _: u64) -> Result<bool> {
            unused()
        }
        fn event_free(&self, e: u64) {
            self.log(format!("free event {e}"));
        }
        fn sync(&self) -> Result<()> {
            self.log("device sync".into());
            Ok(())
        }
    }

    #[test]
    fn stream_values_follow_the_dlpack_spec() {
        assert_eq!(consumer_stream(-1).unwrap(), None);
        assert_eq!(consumer_stream(1).unwrap(), Some(0));
        assert_eq!(consumer_stream(2).unwrap(), Some(2));
        assert_eq!(consumer_stream(0x7f00_1234).unwrap(), Some(0x7f00_1234));
        assert!(consumer_stream(0).unwrap_err().to_string().contains("ambiguous"));
        assert!(consumer_stream(-5).is_err());
    }

    #[test]
    fn the_consumer_stream_waits_on_an_event_of_the_producer_stream() {
        let g = Recorder::new();
        order(&g, 5, 9).unwrap();
        // An event on the producer's stream, a wait on the consumer's, and no blocking sync.
        assert_eq!(g.calls(), ["record on 5", "wait 9 on event 77", "free event 77"]);
        let g = Recorder::new();
        order(&g, 0, 0).unwrap();
        assert!(g.calls().is_empty(), "same stream: already in order");
        let g = Recorder::new();
        order(&g, 0, consumer_stream(2).unwrap().unwrap()).unwrap();
        assert_eq!(g.calls(), ["record on 0", "wait 2 on event 77", "free event 77"]);
    }
}
