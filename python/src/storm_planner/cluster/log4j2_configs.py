"""The two log4j2 files a Storm home needs; they are in no Maven jar.

``cluster.xml`` is used by every daemon we start (ZooKeeper, Nimbus,
supervisors, UI): one file per daemon, ``${storm.log.dir}/${logfile.name}``.
``worker.xml`` is what the supervisor passes to each worker it launches, with
the system properties it sets (``workers.artifacts``, ``storm.id``,
``worker.port``, ``logfile.name``), so a worker's log lands in
``<log dir>/workers-artifacts/<topology id>/<port>/worker.log``. The worker's
stdout and stderr (where Storm's LogWriter sends them as the ``STDOUT`` and
``STDERR`` loggers) go into the same file, which keeps one place to look.
"""

_PATTERN = "%d{yyyy-MM-dd HH:mm:ss.SSS} %c{1.} %t [%p] %msg%n"

CLUSTER_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by storm-planner: the log configuration of every daemon. -->
<Configuration monitorInterval="60" shutdownHook="disable">
  <Appenders>
    <RollingFile name="daemon"
                 fileName="${{sys:storm.log.dir}}/${{sys:logfile.name}}"
                 filePattern="${{sys:storm.log.dir}}/${{sys:logfile.name}}.%i.gz">
      <PatternLayout pattern="{_PATTERN}"/>
      <Policies><SizeBasedTriggeringPolicy size="50 MB"/></Policies>
      <DefaultRolloverStrategy max="3"/>
    </RollingFile>
  </Appenders>
  <Loggers>
    <Logger name="org.apache.zookeeper" level="WARN"/>
    <Logger name="org.apache.storm.shade.org.apache.zookeeper" level="WARN"/>
    <Logger name="org.apache.storm.shade.org.apache.curator" level="WARN"/>
    <Root level="INFO"><AppenderRef ref="daemon"/></Root>
  </Loggers>
</Configuration>
"""

WORKER_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by storm-planner: the log configuration of every worker. -->
<Configuration monitorInterval="60" shutdownHook="disable">
  <Properties>
    <Property name="logfile">${{sys:workers.artifacts}}/${{sys:storm.id}}/${{sys:worker.port}}/${{sys:logfile.name}}</Property>
  </Properties>
  <Appenders>
    <RollingFile name="worker" fileName="${{logfile}}" filePattern="${{logfile}}.%i.gz">
      <PatternLayout pattern="{_PATTERN}"/>
      <Policies><SizeBasedTriggeringPolicy size="50 MB"/></Policies>
      <DefaultRolloverStrategy max="3"/>
    </RollingFile>
  </Appenders>
  <Loggers>
    <Logger name="org.apache.zookeeper" level="WARN"/>
    <Logger name="org.apache.storm.shade.org.apache.zookeeper" level="WARN"/>
    <Logger name="org.apache.storm.shade.org.apache.curator" level="WARN"/>
    <Logger name="STDOUT" level="INFO"/>
    <Logger name="STDERR" level="INFO"/>
    <Root level="INFO"><AppenderRef ref="worker"/></Root>
  </Loggers>
</Configuration>
"""
