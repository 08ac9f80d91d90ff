"""ldap3: RestartableStrategy stores live exceptions (with tracebacks) in exception_history.

https://github.com/cannatag/ldap3/issues/529 ("Reference cycles in RestartableStrategy"); 2.5.1
changelog: "fixed circular reference in exception history". In 2.5 `_open_socket` appends
`(datetime.now(), exc_info()[0], exc_info()[1])` to `self.exception_history`: the stored
exception's traceback holds `_open_socket`'s frame, whose `self` is the strategy that owns the
list. 2.5.1 stores a fresh `type(e)(str(e))` copy. Connects to a closed port on 127.0.0.1.
"""
# package: ldap3
# leaking: 2.5
# fixed: 2.5.1
# python: 3.11+
# culprit: ldap3.strategy.restartable.RestartableStrategy._open_socket

import collections
import collections.abc
import socket

# ldap3 2.5 predates Python 3.10 (its ciDict subclasses collections.MutableMapping); a compat
# shim so that it imports, nothing else.
for _name in ("Mapping", "MutableMapping"):
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

from ldap3 import RESTARTABLE, Connection, Server, set_config_parameter  # noqa: E402

set_config_parameter("RESTARTABLE_TRIES", 1)
set_config_parameter("RESTARTABLE_SLEEPTIME", 0)


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def bind_user(port):
    payload = bytearray(4 << 20)
    server = Server("127.0.0.1", port=port, connect_timeout=1)
    conn = Connection(server, client_strategy=RESTARTABLE)
    try:
        conn.open()
    except Exception:
        pass
    return len(payload)


bind_user(closed_port())
