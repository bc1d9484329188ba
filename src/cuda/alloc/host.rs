//! THCCachingHostAllocator (to be written).
