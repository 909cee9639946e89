import NIOHTTP2
import X509
import NIOPosix
