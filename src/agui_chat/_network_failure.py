"""Why a connection failed, in words that tell DNS, a refusal and TLS apart."""

import socket
import ssl

_CAUSES: tuple[tuple[type[BaseException], str], ...] = (
    (socket.gaierror, "the host name does not resolve (DNS)"),
    (ConnectionRefusedError, "connection refused: nothing listens on that port"),
    (ssl.SSLCertVerificationError, "its TLS certificate is not trusted"),
    (ssl.SSLError, "the TLS handshake failed: does it speak TLS (is it http://, not https://)?"),
    (ConnectionResetError, "it reset the connection unanswered (a TLS server does to plain HTTP)"),
)


def network_failure(exc: BaseException | None) -> str | None:
    """The cause of a failed connection found in ``exc``'s chain, in words; else ``None``."""
    while exc is not None:
        for kind, words in _CAUSES:
            if isinstance(exc, kind):
                return words
        exc = exc.__cause__ or exc.__context__
    return None
