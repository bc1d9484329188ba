//! The fused GRU and LSTM cells (GRUFused, LSTMFused).
