-- sqlite
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
CREATE TABLE claim (
	id INTEGER NOT NULL, 
	run_uid VARCHAR(255) NOT NULL, 
	content_hash VARCHAR(64) NOT NULL, 
	owner VARCHAR(64) NOT NULL, 
	host VARCHAR(255) NOT NULL, 
	pid INTEGER NOT NULL, 
	heartbeat DATETIME NOT NULL, 
	claimed_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_claim_run_hash UNIQUE (run_uid, content_hash)
);
CREATE TABLE experiment (
	id INTEGER NOT NULL, 
	uid VARCHAR(255) NOT NULL, 
	created DATETIME NOT NULL, 
	design TEXT, 
	PRIMARY KEY (id), 
	UNIQUE (uid)
);
CREATE TABLE session_tree (
	id INTEGER NOT NULL, 
	uid VARCHAR(255) NOT NULL, 
	kind VARCHAR(16) NOT NULL, 
	config TEXT, 
	status TEXT, 
	created DATETIME NOT NULL, 
	updated DATETIME, 
	PRIMARY KEY (id), 
	UNIQUE (uid)
);
CREATE TABLE store_meta (
	"key" VARCHAR(64) NOT NULL, 
	value VARCHAR(255) NOT NULL, 
	PRIMARY KEY ("key")
);
CREATE TABLE run (
	id INTEGER NOT NULL, 
	uid VARCHAR(255) NOT NULL, 
	experiment_id INTEGER, 
	content_hash VARCHAR(64) NOT NULL, 
	document TEXT NOT NULL, 
	design_point INTEGER, 
	repetition INTEGER, 
	seed BIGINT, 
	levels TEXT, 
	file_sha256 VARCHAR(64), 
	created DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_run_uid_hash UNIQUE (uid, content_hash), 
	FOREIGN KEY(experiment_id) REFERENCES experiment (id) ON DELETE CASCADE
);
CREATE INDEX ix_run_experiment_id ON run (experiment_id);
CREATE INDEX ix_run_file_sha256 ON run (file_sha256);
CREATE INDEX ix_run_uid ON run (uid);
CREATE TABLE run_instance (
	id INTEGER NOT NULL, 
	uuid VARCHAR(36) NOT NULL, 
	run_id INTEGER NOT NULL, 
	host VARCHAR(255) NOT NULL, 
	pid INTEGER NOT NULL, 
	start DATETIME NOT NULL, 
	"end" DATETIME, 
	status VARCHAR(16) NOT NULL, 
	error TEXT, 
	traceback TEXT, 
	heartbeat DATETIME, 
	results_dir TEXT, 
	warnings TEXT, 
	PRIMARY KEY (id), 
	UNIQUE (uuid), 
	FOREIGN KEY(run_id) REFERENCES run (id) ON DELETE CASCADE
);
CREATE INDEX ix_run_instance_run_status ON run_instance (run_id, status);
CREATE INDEX ix_run_instance_status ON run_instance (status);
CREATE TABLE phase (
	id INTEGER NOT NULL, 
	instance_id INTEGER NOT NULL, 
	"index" INTEGER NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	mode VARCHAR(32) NOT NULL, 
	config TEXT, 
	status VARCHAR(16) NOT NULL, 
	start DATETIME NOT NULL, 
	"end" DATETIME, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_phase_instance_index UNIQUE (instance_id, "index"), 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE CASCADE
);
CREATE TABLE rung (
	id INTEGER NOT NULL, 
	instance_id INTEGER NOT NULL, 
	phase_index INTEGER NOT NULL, 
	rung INTEGER NOT NULL, 
	step BIGINT NOT NULL, 
	value FLOAT, 
	pruned BOOLEAN NOT NULL, 
	peers INTEGER NOT NULL, 
	created DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_rung_instance_phase_rung UNIQUE (instance_id, phase_index, rung), 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE CASCADE
);
CREATE INDEX ix_rung_phase_rung ON rung (phase_index, rung);
CREATE TABLE session_node (
	id INTEGER NOT NULL, 
	tree_id INTEGER NOT NULL, 
	run_uid VARCHAR(255) NOT NULL, 
	content_hash VARCHAR(64) NOT NULL, 
	file TEXT, 
	depth INTEGER NOT NULL, 
	batch INTEGER NOT NULL, 
	direction INTEGER, 
	health VARCHAR(16) NOT NULL, 
	metric FLOAT, 
	reason TEXT, 
	instance_id INTEGER, 
	created DATETIME NOT NULL, 
	updated DATETIME, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_session_node_tree_run UNIQUE (tree_id, run_uid), 
	FOREIGN KEY(tree_id) REFERENCES session_tree (id) ON DELETE CASCADE, 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE SET NULL
);
CREATE INDEX ix_session_node_run_uid ON session_node (run_uid);
CREATE INDEX ix_session_node_tree_id ON session_node (tree_id);
CREATE TABLE stop_request (
	instance_id INTEGER NOT NULL, 
	requested DATETIME NOT NULL, 
	reason TEXT, 
	PRIMARY KEY (instance_id), 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE CASCADE
);
CREATE TABLE checkpoint (
	id INTEGER NOT NULL, 
	instance_id INTEGER NOT NULL, 
	phase_id INTEGER, 
	agent VARCHAR(255) NOT NULL, 
	step BIGINT, 
	episode INTEGER, 
	path TEXT NOT NULL, 
	sha256 VARCHAR(64), 
	metric FLOAT, 
	best BOOLEAN NOT NULL, 
	created DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE CASCADE, 
	FOREIGN KEY(phase_id) REFERENCES phase (id) ON DELETE CASCADE
);
CREATE INDEX ix_checkpoint_instance_agent ON checkpoint (instance_id, agent);
CREATE INDEX ix_checkpoint_phase_id ON checkpoint (phase_id);
CREATE TABLE episode (
	id INTEGER NOT NULL, 
	phase_id INTEGER NOT NULL, 
	worker INTEGER NOT NULL, 
	episode INTEGER NOT NULL, 
	agent VARCHAR(255) NOT NULL, 
	steps INTEGER NOT NULL, 
	reward FLOAT, 
	objective FLOAT, 
	wall_time FLOAT, 
	extras TEXT, 
	terminated BOOLEAN, 
	truncated BOOLEAN, 
	cut_by VARCHAR(64), 
	PRIMARY KEY (id), 
	FOREIGN KEY(phase_id) REFERENCES phase (id) ON DELETE CASCADE
);
CREATE INDEX ix_episode_phase_episode ON episode (phase_id, episode, agent);
CREATE INDEX ix_episode_phase_id ON episode (phase_id, id);
CREATE TABLE session_edge (
	id INTEGER NOT NULL, 
	parent_id INTEGER NOT NULL, 
	child_id INTEGER NOT NULL, 
	overrides TEXT, 
	source_phase VARCHAR(255), 
	source_instance_id INTEGER, 
	segment TEXT, 
	created DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(parent_id) REFERENCES session_node (id) ON DELETE CASCADE, 
	UNIQUE (child_id), 
	FOREIGN KEY(child_id) REFERENCES session_node (id) ON DELETE CASCADE
);
CREATE INDEX ix_session_edge_parent_id ON session_edge (parent_id);
CREATE TABLE step (
	id INTEGER NOT NULL, 
	phase_id INTEGER NOT NULL, 
	worker INTEGER NOT NULL, 
	episode INTEGER NOT NULL, 
	step INTEGER NOT NULL, 
	agent VARCHAR(255) NOT NULL, 
	sensors TEXT, 
	actions TEXT, 
	rewards TEXT, 
	objective FLOAT, 
	done BOOLEAN NOT NULL, 
	terminated BOOLEAN, 
	truncated BOOLEAN, 
	cut_by VARCHAR(64), 
	PRIMARY KEY (id), 
	FOREIGN KEY(phase_id) REFERENCES phase (id) ON DELETE CASCADE
);
CREATE INDEX ix_step_phase_episode ON step (phase_id, worker, episode, step);
CREATE TABLE brain_source (
	id INTEGER NOT NULL, 
	instance_id INTEGER NOT NULL, 
	phase_id INTEGER, 
	agent VARCHAR(255) NOT NULL, 
	source_kind VARCHAR(32) NOT NULL, 
	source_run_uid VARCHAR(255), 
	source_phase VARCHAR(255), 
	source_checkpoint_id INTEGER, 
	source_path TEXT, 
	source_sha256 VARCHAR(64), 
	PRIMARY KEY (id), 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE CASCADE, 
	FOREIGN KEY(phase_id) REFERENCES phase (id) ON DELETE CASCADE, 
	FOREIGN KEY(source_checkpoint_id) REFERENCES checkpoint (id) ON DELETE SET NULL
);
CREATE INDEX ix_brain_source_instance ON brain_source (instance_id, agent);
CREATE INDEX ix_brain_source_source_run_uid ON brain_source (source_run_uid);
-- postgresql
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
CREATE TABLE claim (
	id BIGSERIAL NOT NULL, 
	run_uid VARCHAR(255) NOT NULL, 
	content_hash VARCHAR(64) NOT NULL, 
	owner VARCHAR(64) NOT NULL, 
	host VARCHAR(255) NOT NULL, 
	pid INTEGER NOT NULL, 
	heartbeat TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	claimed_at TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_claim_run_hash UNIQUE (run_uid, content_hash)
);
CREATE TABLE experiment (
	id BIGSERIAL NOT NULL, 
	uid VARCHAR(255) NOT NULL, 
	created TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	design TEXT, 
	PRIMARY KEY (id), 
	UNIQUE (uid)
);
CREATE TABLE session_tree (
	id BIGSERIAL NOT NULL, 
	uid VARCHAR(255) NOT NULL, 
	kind VARCHAR(16) NOT NULL, 
	config TEXT, 
	status TEXT, 
	created TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	updated TIMESTAMP WITHOUT TIME ZONE, 
	PRIMARY KEY (id), 
	UNIQUE (uid)
);
CREATE TABLE store_meta (
	key VARCHAR(64) NOT NULL, 
	value VARCHAR(255) NOT NULL, 
	PRIMARY KEY (key)
);
CREATE TABLE run (
	id BIGSERIAL NOT NULL, 
	uid VARCHAR(255) NOT NULL, 
	experiment_id BIGINT, 
	content_hash VARCHAR(64) NOT NULL, 
	document TEXT NOT NULL, 
	design_point INTEGER, 
	repetition INTEGER, 
	seed BIGINT, 
	levels TEXT, 
	file_sha256 VARCHAR(64), 
	created TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_run_uid_hash UNIQUE (uid, content_hash), 
	FOREIGN KEY(experiment_id) REFERENCES experiment (id) ON DELETE CASCADE
);
CREATE INDEX ix_run_experiment_id ON run (experiment_id);
CREATE INDEX ix_run_file_sha256 ON run (file_sha256);
CREATE INDEX ix_run_uid ON run (uid);
CREATE TABLE run_instance (
	id BIGSERIAL NOT NULL, 
	uuid VARCHAR(36) NOT NULL, 
	run_id BIGINT NOT NULL, 
	host VARCHAR(255) NOT NULL, 
	pid INTEGER NOT NULL, 
	start TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	"end" TIMESTAMP WITHOUT TIME ZONE, 
	status VARCHAR(16) NOT NULL, 
	error TEXT, 
	traceback TEXT, 
	heartbeat TIMESTAMP WITHOUT TIME ZONE, 
	results_dir TEXT, 
	warnings TEXT, 
	PRIMARY KEY (id), 
	UNIQUE (uuid), 
	FOREIGN KEY(run_id) REFERENCES run (id) ON DELETE CASCADE
);
CREATE INDEX ix_run_instance_run_status ON run_instance (run_id, status);
CREATE INDEX ix_run_instance_status ON run_instance (status);
CREATE TABLE phase (
	id BIGSERIAL NOT NULL, 
	instance_id BIGINT NOT NULL, 
	index INTEGER NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	mode VARCHAR(32) NOT NULL, 
	config TEXT, 
	status VARCHAR(16) NOT NULL, 
	start TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	"end" TIMESTAMP WITHOUT TIME ZONE, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_phase_instance_index UNIQUE (instance_id, index), 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE CASCADE
);
CREATE TABLE rung (
	id BIGSERIAL NOT NULL, 
	instance_id BIGINT NOT NULL, 
	phase_index INTEGER NOT NULL, 
	rung INTEGER NOT NULL, 
	step BIGINT NOT NULL, 
	value FLOAT, 
	pruned BOOLEAN NOT NULL, 
	peers INTEGER NOT NULL, 
	created TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_rung_instance_phase_rung UNIQUE (instance_id, phase_index, rung), 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE CASCADE
);
CREATE INDEX ix_rung_phase_rung ON rung (phase_index, rung);
CREATE TABLE session_node (
	id BIGSERIAL NOT NULL, 
	tree_id BIGINT NOT NULL, 
	run_uid VARCHAR(255) NOT NULL, 
	content_hash VARCHAR(64) NOT NULL, 
	file TEXT, 
	depth INTEGER NOT NULL, 
	batch INTEGER NOT NULL, 
	direction INTEGER, 
	health VARCHAR(16) NOT NULL, 
	metric FLOAT, 
	reason TEXT, 
	instance_id BIGINT, 
	created TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	updated TIMESTAMP WITHOUT TIME ZONE, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_session_node_tree_run UNIQUE (tree_id, run_uid), 
	FOREIGN KEY(tree_id) REFERENCES session_tree (id) ON DELETE CASCADE, 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE SET NULL
);
CREATE INDEX ix_session_node_run_uid ON session_node (run_uid);
CREATE INDEX ix_session_node_tree_id ON session_node (tree_id);
CREATE TABLE stop_request (
	instance_id BIGINT NOT NULL, 
	requested TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	reason TEXT, 
	PRIMARY KEY (instance_id), 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE CASCADE
);
CREATE TABLE checkpoint (
	id BIGSERIAL NOT NULL, 
	instance_id BIGINT NOT NULL, 
	phase_id BIGINT, 
	agent VARCHAR(255) NOT NULL, 
	step BIGINT, 
	episode INTEGER, 
	path TEXT NOT NULL, 
	sha256 VARCHAR(64), 
	metric FLOAT, 
	best BOOLEAN NOT NULL, 
	created TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE CASCADE, 
	FOREIGN KEY(phase_id) REFERENCES phase (id) ON DELETE CASCADE
);
CREATE INDEX ix_checkpoint_instance_agent ON checkpoint (instance_id, agent);
CREATE INDEX ix_checkpoint_phase_id ON checkpoint (phase_id);
CREATE TABLE episode (
	id BIGSERIAL NOT NULL, 
	phase_id BIGINT NOT NULL, 
	worker INTEGER NOT NULL, 
	episode INTEGER NOT NULL, 
	agent VARCHAR(255) NOT NULL, 
	steps INTEGER NOT NULL, 
	reward FLOAT, 
	objective FLOAT, 
	wall_time FLOAT, 
	extras TEXT, 
	terminated BOOLEAN, 
	truncated BOOLEAN, 
	cut_by VARCHAR(64), 
	PRIMARY KEY (id), 
	FOREIGN KEY(phase_id) REFERENCES phase (id) ON DELETE CASCADE
);
CREATE INDEX ix_episode_phase_episode ON episode (phase_id, episode, agent);
CREATE INDEX ix_episode_phase_id ON episode (phase_id, id);
CREATE TABLE session_edge (
	id BIGSERIAL NOT NULL, 
	parent_id BIGINT NOT NULL, 
	child_id BIGINT NOT NULL, 
	overrides TEXT, 
	source_phase VARCHAR(255), 
	source_instance_id INTEGER, 
	segment TEXT, 
	created TIMESTAMP WITHOUT TIME ZONE NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(parent_id) REFERENCES session_node (id) ON DELETE CASCADE, 
	UNIQUE (child_id), 
	FOREIGN KEY(child_id) REFERENCES session_node (id) ON DELETE CASCADE
);
CREATE INDEX ix_session_edge_parent_id ON session_edge (parent_id);
CREATE TABLE step (
	id BIGSERIAL NOT NULL, 
	phase_id BIGINT NOT NULL, 
	worker INTEGER NOT NULL, 
	episode INTEGER NOT NULL, 
	step INTEGER NOT NULL, 
	agent VARCHAR(255) NOT NULL, 
	sensors TEXT, 
	actions TEXT, 
	rewards TEXT, 
	objective FLOAT, 
	done BOOLEAN NOT NULL, 
	terminated BOOLEAN, 
	truncated BOOLEAN, 
	cut_by VARCHAR(64), 
	PRIMARY KEY (id), 
	FOREIGN KEY(phase_id) REFERENCES phase (id) ON DELETE CASCADE
);
CREATE INDEX ix_step_phase_episode ON step (phase_id, worker, episode, step);
CREATE TABLE brain_source (
	id BIGSERIAL NOT NULL, 
	instance_id BIGINT NOT NULL, 
	phase_id BIGINT, 
	agent VARCHAR(255) NOT NULL, 
	source_kind VARCHAR(32) NOT NULL, 
	source_run_uid VARCHAR(255), 
	source_phase VARCHAR(255), 
	source_checkpoint_id BIGINT, 
	source_path TEXT, 
	source_sha256 VARCHAR(64), 
	PRIMARY KEY (id), 
	FOREIGN KEY(instance_id) REFERENCES run_instance (id) ON DELETE CASCADE, 
	FOREIGN KEY(phase_id) REFERENCES phase (id) ON DELETE CASCADE, 
	FOREIGN KEY(source_checkpoint_id) REFERENCES checkpoint (id) ON DELETE SET NULL
);
CREATE INDEX ix_brain_source_instance ON brain_source (instance_id, agent);
CREATE INDEX ix_brain_source_source_run_uid ON brain_source (source_run_uid);
