"""Why a connection failed, in words that tell DNS, a refusal and TLS apart, and what to do
about each: the one wording the AG-UI client's errors and the command line share."""

import socket
import ssl

#: The words for a port nothing listens on (the command line adds how to start a server).
REFUSED = "connection refused: nothing listens on that port"

#: Each cause: the exception found in the chain, the words for it, and what to do after them.
_CAUSES: tuple[tuple[type[BaseException], str, str], ...] = (
    (socket.gaierror, "the host name does not resolve (DNS)", "; check the host name in the URL"),
    (ConnectionRefusedError, REFUSED, ". Is the server running?"),
    (
        ssl.SSLCertVerificationError,
        "its TLS certificate is not trusted",
        "; check the URL's host and the certificate's issuer",
    ),
    (
        ssl.SSLError,
        "the TLS handshake failed: does it speak TLS (is it http://, not https://)?",
        "",
    ),
    (
        ConnectionResetError,
        "it reset the connection unanswered (a TLS server does to plain HTTP)",
        "; try https://",
    ),
)


def network_failure(exc: BaseException | None, *, advice: bool = False) -> str | None:
    """The cause of a failed connection found in ``exc``'s chain, in words (followed by what
    to do about it with ``advice``); else ``None``."""
    while exc is not None:
        for kind, words, to_do in _CAUSES:
            if isinstance(exc, kind):
                return words + to_do if advice else words
        exc = exc.__cause__ or exc.__context__
    return None
