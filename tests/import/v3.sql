-- xxl-ctl import's test (tests/test_import.sh): XXL-JOB 3.x's columns
-- (xxl_job_group.name for title, access_token; xxl_job_info.name for
-- job_desc), columns in another order, --complete-insert rows, CRLF ends.
CREATE TABLE `xxl_job_group` (
  `id` INT NOT NULL AUTO_INCREMENT,
  `app_name` VARCHAR(64) NOT NULL,
  `name` VARCHAR(64) NOT NULL,
  `address_type` TINYINT NOT NULL DEFAULT 0,
  `address_list` TEXT DEFAULT NULL,
  `access_token` VARCHAR(255) DEFAULT NULL,
  `update_time` DATETIME DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `i_app_name` (`app_name`) USING BTREE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
CREATE TABLE `xxl_job_info` (
  `id` INT NOT NULL AUTO_INCREMENT,
  `job_group` INT NOT NULL,
  `name` VARCHAR(255) NOT NULL,
  `author` VARCHAR(64) DEFAULT NULL,
  `alarm_email` VARCHAR(255) DEFAULT NULL,
  `schedule_type` VARCHAR(50) NOT NULL DEFAULT 'NONE',
  `schedule_conf` VARCHAR(128) DEFAULT NULL,
  `misfire_strategy` VARCHAR(50) NOT NULL DEFAULT 'DO_NOTHING',
  `executor_route_strategy` VARCHAR(50) DEFAULT NULL,
  `executor_handler` VARCHAR(255) DEFAULT NULL,
  `executor_param` TEXT DEFAULT NULL,
  `executor_block_strategy` VARCHAR(50) DEFAULT NULL,
  `executor_timeout` INT NOT NULL DEFAULT 0,
  `executor_fail_retry_count` INT NOT NULL DEFAULT 0,
  `glue_type` VARCHAR(50) NOT NULL,
  `glue_source` MEDIUMTEXT DEFAULT NULL,
  `glue_remark` VARCHAR(128) DEFAULT NULL,
  `glue_updatetime` DATETIME DEFAULT NULL,
  `child_jobid` VARCHAR(255) DEFAULT NULL,
  `trigger_status` TINYINT NOT NULL DEFAULT 0,
  `trigger_last_time` BIGINT NOT NULL DEFAULT 0,
  `trigger_next_time` BIGINT NOT NULL DEFAULT 0,
  `add_time` DATETIME DEFAULT NULL,
  `update_time` DATETIME DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
INSERT INTO `xxl_job_group` (`id`, `app_name`, `name`, `address_type`, `address_list`, `access_token`, `update_time`) VALUES (7,'imp-v3','三号执行器',0,NULL,'default_token','2025-01-01 00:00:00');
INSERT INTO `xxl_job_info` VALUES (21,7,'每分钟任务','XXL','','CRON','0 * * * * ?','DO_NOTHING','ROUND','minuteHandler','{\r\n  \"k\": \"v\"\r\n}','SERIAL_EXECUTION',0,0,'BEAN','','GLUE代码初始化','2025-01-01 00:00:00','22',1,0,0,'2025-01-01 00:00:00','2025-01-01 00:00:00'),(22,7,'子任务','XXL','','NONE','','DO_NOTHING','FIRST','childHandler','','SERIAL_EXECUTION',0,0,'BEAN','','','2025-01-01 00:00:00','',0,0,0,NULL,NULL),(23,7,'expired','XXL','','CRON','0 0 0 1 1 ? 2001','DO_NOTHING','FIRST','oldHandler','','SERIAL_EXECUTION',0,0,'BEAN','','',NULL,'',1,0,0,NULL,NULL);
