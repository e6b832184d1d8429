extension MultipartFormData {
    /// The MIME type for a file name extension (case-insensitive), from a table of common types;
    /// `application/octet-stream` for anything else, as AFNetworking falls back when the system
    /// knows no type.
    ///
    /// ```swift
    /// MultipartFormData.mimeType(forPathExtension: "JPG")   // "image/jpeg"
    /// MultipartFormData.mimeType(forPathExtension: "xyz")   // "application/octet-stream"
    /// ```
    public static func mimeType(forPathExtension pathExtension: String) -> String {
        Self.mimeTypes[pathExtension.lowercased()] ?? "application/octet-stream"
    }

    private static let mimeTypes: [String: String] = [
        // Text
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
        "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
        "tsv": "text/tab-separated-values", "ics": "text/calendar", "js": "text/javascript", "mjs": "text/javascript",
        "xml": "application/xml", "json": "application/json", "yaml": "application/yaml", "yml": "application/yaml",
        // Images
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "svg": "image/svg+xml", "bmp": "image/bmp", "ico": "image/vnd.microsoft.icon", "tif": "image/tiff",
        "tiff": "image/tiff", "heic": "image/heic", "avif": "image/avif",
        // Audio and video
        "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "flac": "audio/flac", "m4a": "audio/mp4",
        "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm", "mkv": "video/x-matroska",
        "avi": "video/x-msvideo",
        // Documents and archives
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip",
        "tar": "application/x-tar", "bz2": "application/x-bzip2", "xz": "application/x-xz", "7z": "application/x-7z-compressed",
        "doc": "application/msword", "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text", "rtf": "application/rtf", "epub": "application/epub+zip",
        "plist": "application/x-plist", "wasm": "application/wasm", "bin": "application/octet-stream",
        // Fonts
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
    ]
}
