//! The compressed format's constants that `decode.wgsl` shares: the
//! block header, the stream encodings and the verbatim meta word. They
//! are defined with the format (`crate::compress::format`, below the
//! layout) and listed here with the other WGSL constants.

pub(crate) use crate::compress::format::{
    COMPRESS_HEADER_WORDS, ENC_FRAMED, ENC_RAW, ENC_SMALLEST_THREE, ENC_VECTOR, FRAME_WORDS,
    VERBATIM_META,
};
