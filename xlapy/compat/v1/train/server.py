"""tf.train.Server and tf.train.ServerDef, in-process.

xlapy runs one process and no server that other processes connect to: a replicated
program's tasks run here as threads (tf.train.SyncReplicasOptimizer, sync_replicas.py).
Server(server_or_cluster_def, job_name, task_index) checks its arguments as TF does (a
ClusterSpec, its dict, or a ServerDef; job_name and task_index may be left out only when
the cluster leaves one choice; the task must be in the cluster) and keeps the ServerDef.

Its target is "": the in-process target, the only one tf.Session, MonitoredTrainingSession
and ChiefSessionCreator take (they refuse "grpc://..." strings), so
`tf.Session(server.target)` and `MonitoredTrainingSession(master=server.target)` work as
scripts expect. join(), which in TF blocks forever so that a parameter-server task keeps
serving the workers, raises UnimplementedError instead: here no worker can connect, so it
would hang the process.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, UnimplementedError
from xlapy.compat.v1.train.device_setter import ClusterSpec

_PROTOCOLS = ("grpc", "grpc+verbs", "grpc+mpi", "grpc+gdr")


class ServerDef:
    """The definition of one server: its cluster (a ClusterSpec), its job and task, the
    protocol and the default session config (a lite stand-in for TF's protocol buffer)."""

    def __init__(self, cluster=None, job_name="", task_index=0, protocol="",
                 default_session_config=None):
        self.cluster = ClusterSpec(cluster if cluster is not None else {})
        self.job_name = job_name
        self.task_index = task_index
        self.protocol = protocol
        self.default_session_config = default_session_config

    def _fields(self):
        return (self.cluster, self.job_name, self.task_index, self.protocol,
                self.default_session_config)

    def __eq__(self, other):
        return isinstance(other, ServerDef) and self._fields() == other._fields()

    def __repr__(self):
        return (f"ServerDef(cluster={self.cluster.as_dict()!r}, job_name={self.job_name!r}, "
                f"task_index={self.task_index!r}, protocol={self.protocol!r})")


def _make_server_def(server_or_cluster_def, job_name, task_index, protocol, config):
    if isinstance(server_or_cluster_def, ServerDef):
        d = server_or_cluster_def
        sd = ServerDef(d.cluster, d.job_name if job_name is None else job_name,
                       d.task_index if task_index is None else task_index,
                       d.protocol if protocol is None else protocol,
                       d.default_session_config if config is None else config)
    else:
        try:
            cluster = ClusterSpec(server_or_cluster_def)
        except TypeError:
            raise InvalidTypeError("Could not convert `server_or_cluster_def` to a "
                                   "`tf.train.ServerDef` or `tf.train.ClusterSpec`.") from None
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise InvalidArgumentError("Must specify an explicit `job_name`.")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise InvalidArgumentError("Must specify an explicit `task_index`.")
            task_index = indices[0]
        sd = ServerDef(cluster, job_name, task_index, protocol or "grpc", config)
    if not sd.job_name:
        raise InvalidArgumentError("The server's job_name must be set (ServerDef.job_name is "
                                   "empty)")
    if isinstance(sd.task_index, bool) or not isinstance(sd.task_index, int):
        raise InvalidTypeError(f"task_index must be an integer, got {sd.task_index!r}")
    sd.cluster.task_address(sd.job_name, sd.task_index)  # (ValueError: not in the cluster)
    if sd.protocol not in _PROTOCOLS:
        raise InvalidArgumentError(f"Unknown server protocol {sd.protocol!r} (TF's servers: "
                                   f"{', '.join(_PROTOCOLS)})")
    return sd


class Server:
    """An in-process tf.train.Server (see the module doc)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True):
        self._server_def = _make_server_def(server_or_cluster_def, job_name, task_index,
                                            protocol, config)
        self._started = False
        if start:
            self.start()

    def start(self):
        """Start the server (nothing to start in-process; it may be called again)."""
        self._started = True

    def join(self):
        """TF blocks here forever (a ps task serving workers); in-process, no task can
        connect, so this raises instead of hanging."""
        sd = self._server_def
        raise UnimplementedError(
            f"Server.join() (job {sd.job_name!r}, task {sd.task_index}) would block forever: "
            f"xlapy's servers are in-process and no other task can connect to them. Run the "
            f"replicas in this process (threads sharing one session) instead of a separate "
            f"parameter-server process that joins its server.")

    @property
    def server_def(self):
        return self._server_def

    @property
    def target(self):
        """The target for tf.Session: "" (this process; see the module doc)."""
        return ""

    @staticmethod
    def create_local_server(config=None, start=True):
        """A single-task server (job "local") for tests."""
        return Server({"local": ["localhost:0"]}, protocol="grpc", config=config, start=start)


__all__ = ["Server", "ServerDef"]
