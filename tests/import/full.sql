-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)
--
-- Host: localhost    Database: xxl_job
-- ------------------------------------------------------
-- Server version	8.0.36
-- A test dump for xxl-ctl import xxl-job (tests/test_import.sh): XXL-JOB
-- 2.4's schema, rows of every schedule type, route, block strategy and
-- glue type, written for xxl's tests (not XXL-JOB's own sample data).

/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */;
/*!50503 SET NAMES utf8mb4 */;
/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;
/*!40103 SET TIME_ZONE='+00:00' */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */;

--
-- Table structure for table `xxl_job_group`
--

DROP TABLE IF EXISTS `xxl_job_group`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!50503 SET character_set_client = utf8mb4 */;
CREATE TABLE `xxl_job_group` (
  `id` int NOT NULL AUTO_INCREMENT,
  `app_name` varchar(64) NOT NULL COMMENT '执行器AppName',
  `title` varchar(12) NOT NULL COMMENT '执行器名称',
  `address_type` tinyint NOT NULL DEFAULT '0' COMMENT '执行器地址类型：0=自动注册、1=手动录入',
  `address_list` text COMMENT '执行器地址列表，多地址逗号分隔',
  `update_time` datetime DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB AUTO_INCREMENT=4 DEFAULT CHARSET=utf8mb4;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Dumping data for table `xxl_job_group`
--

LOCK TABLES `xxl_job_group` WRITE;
/*!40000 ALTER TABLE `xxl_job_group` DISABLE KEYS */;
INSERT INTO `xxl_job_group` VALUES (1,'imp-sample','示例执行器',0,NULL,'2024-05-01 10:00:00'),(2,'imp-billing','Billing \'prod\'',1,'http://127.0.0.1:9999/,http://127.0.0.1:9998/','2024-05-01 10:00:00'),(3,'bad app!','Bad',0,NULL,'2024-05-01 10:00:00');
/*!40000 ALTER TABLE `xxl_job_group` ENABLE KEYS */;
UNLOCK TABLES;

--
-- Table structure for table `xxl_job_info`
--

DROP TABLE IF EXISTS `xxl_job_info`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!50503 SET character_set_client = utf8mb4 */;
CREATE TABLE `xxl_job_info` (
  `id` int NOT NULL AUTO_INCREMENT,
  `job_group` int NOT NULL COMMENT '执行器主键ID',
  `job_desc` varchar(255) NOT NULL,
  `add_time` datetime DEFAULT NULL,
  `update_time` datetime DEFAULT NULL,
  `author` varchar(64) DEFAULT NULL COMMENT '作者',
  `alarm_email` varchar(255) DEFAULT NULL COMMENT '报警邮件',
  `schedule_type` varchar(50) NOT NULL DEFAULT 'NONE' COMMENT '调度类型',
  `schedule_conf` varchar(128) DEFAULT NULL COMMENT '调度配置，值含义取决于调度类型',
  `misfire_strategy` varchar(50) NOT NULL DEFAULT 'DO_NOTHING' COMMENT '调度过期策略',
  `executor_route_strategy` varchar(50) DEFAULT NULL COMMENT '执行器路由策略',
  `executor_handler` varchar(255) DEFAULT NULL COMMENT '执行器任务handler',
  `executor_param` varchar(512) DEFAULT NULL COMMENT '执行器任务参数',
  `executor_block_strategy` varchar(50) DEFAULT NULL COMMENT '阻塞处理策略',
  `executor_timeout` int NOT NULL DEFAULT '0' COMMENT '任务执行超时时间，单位秒',
  `executor_fail_retry_count` int NOT NULL DEFAULT '0' COMMENT '失败重试次数',
  `glue_type` varchar(50) NOT NULL COMMENT 'GLUE类型',
  `glue_source` mediumtext COMMENT 'GLUE源代码',
  `glue_remark` varchar(128) DEFAULT NULL COMMENT 'GLUE备注',
  `glue_updatetime` datetime DEFAULT NULL COMMENT 'GLUE更新时间',
  `child_jobid` varchar(255) DEFAULT NULL COMMENT '子任务ID，多个逗号分隔',
  `trigger_status` tinyint NOT NULL DEFAULT '0' COMMENT '调度状态：0-停止，1-运行',
  `trigger_last_time` bigint NOT NULL DEFAULT '0' COMMENT '上次调度时间',
  `trigger_next_time` bigint NOT NULL DEFAULT '0' COMMENT '下次调度时间',
  PRIMARY KEY (`id`)
) ENGINE=InnoDB AUTO_INCREMENT=17 DEFAULT CHARSET=utf8mb4;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Dumping data for table `xxl_job_info`
--

LOCK TABLES `xxl_job_info` WRITE;
/*!40000 ALTER TABLE `xxl_job_info` DISABLE KEYS */;
INSERT INTO `xxl_job_info` VALUES (1,1,'测试任务1 daily','2024-05-01 10:00:00','2024-05-01 10:00:00','XXL','ops@example.com','CRON','0 0 0 * * ? *','DO_NOTHING','FIRST','demoJobHandler','','SERIAL_EXECUTION',0,0,'BEAN','','GLUE代码初始化','2024-05-01 10:00:00','2,3',1,0,1714608000000),(2,1,'rate job','2024-05-01 10:00:00','2024-05-01 10:00:00','李雷','','FIX_RATE','30','FIRE_ONCE_NOW','ROUND','rateHandler','{\"a\":\"b\'s \\\\ c\",\n \"tab\":\"\t\"}','DISCARD_LATER',60,3,'BEAN','','','2024-05-01 10:00:00','',1,0,0),(3,1,'none job','2024-05-01 10:00:00','2024-05-01 10:00:00','XXL','','NONE','','DO_NOTHING','RANDOM','noneHandler',NULL,'COVER_EARLY',0,0,'BEAN',NULL,NULL,NULL,NULL,0,0,0),(4,1,'shell 脚本','2024-05-01 10:00:00','2024-05-01 10:00:00','XXL','','CRON','0/30 * * * * ?','DO_NOTHING','LAST','','','SERIAL_EXECUTION',0,0,'GLUE_SHELL','#!/bin/bash\necho \"hello\" \'world\' \\\\n\r\necho 你好\n\texit 0\n','第三版','2024-05-03 10:00:00','',0,0,0),(5,1,'python job','2024-05-01 10:00:00','2024-05-01 10:00:00','XXL','','CRON','0 15 10 ? * MON-FRI','DO_NOTHING','CONSISTENT_HASH','','a b','SERIAL_EXECUTION',0,0,'GLUE_PYTHON','# -*- coding: utf-8 -*-\nprint(\'任务\', 100%)\n','py init','2024-05-01 10:00:00','',0,0,0),(6,1,'node job','2024-05-01 10:00:00','2024-05-01 10:00:00','XXL','','FIX_RATE','3600','DO_NOTHING','LEAST_FREQUENTLY_USED','','','DISCARD_LATER',0,0,'GLUE_NODEJS','console.log(\"node\");\n','node init','2024-05-01 10:00:00','',0,0,0),(7,1,'php job','2024-05-01 10:00:00','2024-05-01 10:00:00','XXL','','NONE','','DO_NOTHING','LEAST_RECENTLY_USED','','','COVER_EARLY',0,0,'GLUE_PHP','<?php\necho \"php\\\\n\";\n','php init','2024-05-01 10:00:00','',0,0,0),(8,1,'powershell job','2024-05-01 10:00:00','2024-05-01 10:00:00','XXL','','NONE','','DO_NOTHING','FAILOVER','','','SERIAL_EXECUTION',30,1,'GLUE_POWERSHELL','Write-Host \"ps\"\n','ps init','2024-05-01 10:00:00','',0,0,0),(9,1,'groovy job','2024-05-01 10:00:00','2024-05-01 10:00:00','XXL','','NONE','','DO_NOTHING','FIRST','','','SERIAL_EXECUTION',0,0,'GLUE_GROOVY','package com.xxl.job.service.handler;\n','groovy','2024-05-01 10:00:00','',0,0,0),(10,2,'sharded 分片','2024-05-01 10:00:00','2024-05-01 10:00:00','XXL','','CRON','0 0 1 * * ?','FIRE_ONCE_NOW','SHARDING_BROADCAST','shardHandler','','SERIAL_EXECUTION',0,2,'BEAN','','','2024-05-01 10:00:00','11,99',1,0,0),(11,2,'busy job','2024-05-01 10:00:00','2024-05-01 10:00:00','XXL','','NONE','','DO_NOTHING','BUSYOVER','busyHandler','','SERIAL_EXECUTION',0,0,'BEAN','','','2024-05-01 10:00:00','',0,0,0);
/*!40000 ALTER TABLE `xxl_job_info` ENABLE KEYS */;
INSERT INTO `xxl_job_info` (`id`, `job_group`, `job_desc`, `executor_handler`, `glue_type`, `schedule_type`, `schedule_conf`, `child_jobid`, `author`, `glue_source`) VALUES (12,1,'cycle a','cycleHandler','BEAN','NONE','','13','XXL',''),(13,1,'cycle b','cycleHandler','BEAN','NONE',NULL,'12','XXL',''),(14,3,'in a bad group','h','BEAN','NONE','','','',''),(15,1,'python2 job','','GLUE_PYTHON2','NONE','','','','# -*- coding: utf-8 -*-\nimport sys\nprint \"py2\", sys.argv[1]\n'),(16,1,'bad cron','h','BEAN','CRON','not a cron','','','');
UNLOCK TABLES;

--
-- Table structure for table `xxl_job_log`
--

DROP TABLE IF EXISTS `xxl_job_log`;
CREATE TABLE `xxl_job_log` (
  `id` bigint NOT NULL AUTO_INCREMENT,
  `job_group` int NOT NULL,
  `job_id` int NOT NULL,
  `handle_msg` text,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

LOCK TABLES `xxl_job_log` WRITE;
INSERT INTO `xxl_job_log` VALUES (1,1,1,'ok); INSERT INTO `xxl_job_info` VALUES (99'),(2,1,1,NULL);
UNLOCK TABLES;

--
-- Table structure for table `xxl_job_logglue`
--

DROP TABLE IF EXISTS `xxl_job_logglue`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!50503 SET character_set_client = utf8mb4 */;
CREATE TABLE `xxl_job_logglue` (
  `id` int NOT NULL AUTO_INCREMENT,
  `job_id` int NOT NULL COMMENT '任务，主键ID',
  `glue_type` varchar(50) DEFAULT NULL COMMENT 'GLUE类型',
  `glue_source` mediumtext COMMENT 'GLUE源代码',
  `glue_remark` varchar(128) NOT NULL COMMENT 'GLUE备注',
  `add_time` datetime DEFAULT NULL,
  `update_time` datetime DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB AUTO_INCREMENT=6 DEFAULT CHARSET=utf8mb4;
/*!40101 SET character_set_client = @saved_cs_client */;

LOCK TABLES `xxl_job_logglue` WRITE;
/*!40000 ALTER TABLE `xxl_job_logglue` DISABLE KEYS */;
INSERT INTO `xxl_job_logglue` VALUES (1,4,'GLUE_SHELL','#!/bin/bash\necho v1\n','第一版','2024-05-01 10:00:00','2024-05-01 10:00:00'),(2,4,'GLUE_SHELL','#!/bin/bash\necho v2\n','second','2024-05-02 10:00:00','2024-05-02 10:00:00'),(3,4,'GLUE_SHELL','#!/bin/bash\necho \"hello\" \'world\' \\\\n\r\necho 你好\n\texit 0\n','第三版','2024-05-03 10:00:00','2024-05-03 10:00:00'),(4,5,'GLUE_PYTHON','# -*- coding: utf-8 -*-\nprint(\'任务\', 100%)\n','py init','2024-05-01 10:00:00','2024-05-01 10:00:00'),(5,9,'GLUE_GROOVY','package x;\n','groovy','2024-05-01 10:00:00','2024-05-01 10:00:00'),(6,15,'GLUE_PYTHON2','print \"v1\"\n','py2 v1','2024-05-01 10:00:00','2024-05-01 10:00:00');
/*!40000 ALTER TABLE `xxl_job_logglue` ENABLE KEYS */;
UNLOCK TABLES;
/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;

-- Dump completed on 2024-05-04 12:00:00
