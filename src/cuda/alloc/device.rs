//! THCCachingAllocator (to be written).
